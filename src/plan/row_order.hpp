// plan/row_order: the ranking's in-place permutation of a plan's rows (issue 19, round 18), moved out of planner.cpp
// (planfast7) to keep that file's size.
#pragma once

#include <cstddef>
#include <vector>

#include "plan/planner.hpp"

namespace preflight::plan {

// Puts `v[order[p]]` at p for every p of `order` (distinct indices of `v`, the places of live elements; every other
// place of `v` holds a moved-from element), each element moved once: a place whose element is not kept (a moved-from
// one) is filled first and the place it was filled from after it, and so on, until the source lies past the kept
// range; what is left are cycles of kept elements among themselves, each moved through one temporary. Places past the
// kept range are left moved-from.
void permute_front(CandidateList& v, const std::vector<size_t>& order);

}  // namespace preflight::plan
