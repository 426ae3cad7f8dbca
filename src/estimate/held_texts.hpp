// estimate/held_texts: a promise a caller of estimate_speed can make for a stretch of its work on one thread, that the
// source texts the explained speed estimate names by address (the device's id, family, link and bandwidth source, the
// speed catalogue's and its profiles' evidence and source texts) stay alive and unchanged (issue 19, planfast6).
//
// estimate_speed builds the texts that are the same on every row of a device (bandwidth basis, efficiency, link) once
// per thread and key, the key holding each source text's address and length, and on every hit it compared the kept
// characters with the source's (a text at an address another text held before must not return that text's result):
// 2.5% of a whole-catalogue `plan --json`'s instructions. Under a HeldTexts of epoch E an entry whose characters were
// compared (or built) under E is not compared again while E holds: the caller's texts cannot have moved or changed.
// Outside any HeldTexts, and at the first hit of each entry under a new epoch, the characters are compared as before.
// Planfast8: the promise covers the cards, the speed catalogue and the profiles themselves (their numbers as well as
// their texts), so that the texts of one (card, profile, catalogue, layout) are kept by those objects' addresses and
// taken with one lookup per estimate under the epoch (speed.cpp, LayoutTexts).
#pragma once

#include <cstdint>

namespace preflight::estimate {

// The epoch the calling thread's HeldTexts holds; 0: none.
uint64_t held_texts_epoch();

// A fresh epoch: never 0, never returned twice in one process. Take one per stretch of work whose texts are held
// (a plan: its device list and speed catalogue are const while it runs) and hand it to a HeldTexts on each thread.
uint64_t new_held_texts_epoch();

// While it lives, the calling thread's speed estimates hold `epoch` (see above); the thread's previous epoch (0: none)
// comes back at its end. The caller keeps every card, speed catalogue and profile it passes to estimate_speed (their
// texts and numbers) alive and unchanged meanwhile.
class HeldTexts {
 public:
  explicit HeldTexts(uint64_t epoch);
  ~HeldTexts();
  HeldTexts(const HeldTexts&) = delete;
  HeldTexts& operator=(const HeldTexts&) = delete;

 private:
  uint64_t m_previous = 0;
};

}  // namespace preflight::estimate
