#include "plan/row_order.hpp"

namespace preflight::plan {

void permute_front(CandidateList& v, const std::vector<size_t>& order) {
  const size_t kept = order.size();
  std::vector<char> live(v.size(), 0), done(kept, 0);
  for (const size_t s : order) live[s] = 1;
  for (size_t p = 0; p < kept; ++p) {
    if (live[p] || done[p]) continue;
    for (size_t q = p;;) {  // q holds no kept element: fill it from its source, which then holds none
      const size_t s = order[q];
      v[q] = std::move(v[s]);
      done[q] = 1;
      if (s >= kept || done[s]) break;
      q = s;
    }
  }
  for (size_t p = 0; p < kept; ++p) {
    if (done[p]) continue;
    done[p] = 1;
    if (order[p] == p) continue;
    Candidate held = std::move(v[p]);
    size_t q = p;
    while (order[q] != p) {
      v[q] = std::move(v[order[q]]);
      q = order[q];
      done[q] = 1;
    }
    v[q] = std::move(held);
  }
}

}  // namespace preflight::plan
