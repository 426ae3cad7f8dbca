// base/shared_text_memo: one SharedText for each of the few texts that many records repeat (issue 19, planfast14: a
// plan's rows name their engine, platform, mode and KV cache dtype, a handful of distinct texts over ~74,000 rows).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/shared_text.hpp"

namespace preflight {

// Keeps the texts it was asked for, each once: of(text) is the SharedText made for the same characters, else a new one,
// kept for the next call. Entries are compared by their characters, so one never stands for another text. At most 32
// are kept (a caller's texts are a few); past them each call makes its own block. One per call site and thread
// (`thread_local`): the last text asked for is compared first.
class SharedTextMemo {
 public:
  const SharedText& of(std::string_view text) {
    if (m_last < m_kept.size() && m_kept[m_last].str() == text) return m_kept[m_last];
    for (size_t i = 0; i < m_kept.size(); ++i)
      if (m_kept[i].str() == text) return m_kept[m_last = i];
    if (m_kept.size() < k_most) {
      m_kept.emplace_back(std::string(text));
      return m_kept[m_last = m_kept.size() - 1];
    }
    m_made = SharedText(std::string(text));
    return m_made;
  }

 private:
  static constexpr size_t k_most = 32;
  std::vector<SharedText> m_kept;
  size_t m_last = 0;
  SharedText m_made;  // past k_most: the last text made, held until the next call
};

}  // namespace preflight
