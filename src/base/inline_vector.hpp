#pragma once
// Issue 19 (fitcopy36): a vector whose first N elements live inside it, for records made by the ten thousand that
// usually hold a few items (a plan row's speed points, provenance and assumptions: three heap blocks a row, 24 M of the
// whole-catalogue plan's instructions). Past N the elements move to a std::vector and stay there (clear() keeps that
// block, as std::vector's clear keeps its own). Reads as a std::vector does where a record's readers use one: size,
// empty, [], front, back, data, raw-pointer iterators (so a std::vector is made from its begin() and end()),
// push_back / emplace_back, reserve, clear, ==.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <new>
#include <utility>
#include <vector>

namespace preflight {

template <class T, size_t N>
class InlineVector {
  static_assert(N > 0);

 public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  InlineVector() = default;
  InlineVector(std::initializer_list<T> items) {
    reserve(items.size());
    for (const T& item : items) push_back(item);
  }
  InlineVector(const InlineVector& other) { append(other); }
  InlineVector(InlineVector&& other) noexcept { take(std::move(other)); }
  InlineVector& operator=(const InlineVector& other) {
    if (this != &other) {
      clear();
      append(other);
    }
    return *this;
  }
  InlineVector& operator=(InlineVector&& other) noexcept {
    if (this != &other) {
      destroy_in_place();
      m_spilled = false;
      m_heap = std::vector<T>();
      take(std::move(other));
    }
    return *this;
  }
  ~InlineVector() { destroy_in_place(); }

  size_t size() const { return m_spilled ? m_heap.size() : m_count; }
  bool empty() const { return size() == 0; }
  size_t capacity() const { return m_spilled ? m_heap.capacity() : N; }
  T* data() { return m_spilled ? m_heap.data() : in_place(); }
  const T* data() const { return m_spilled ? m_heap.data() : in_place(); }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  const T* cbegin() const { return begin(); }
  const T* cend() const { return end(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size() - 1]; }
  const T& back() const { return data()[size() - 1]; }

  void reserve(size_t n) {
    if (m_spilled) m_heap.reserve(n);
    else if (n > N) spill(n);
  }
  void clear() {
    destroy_in_place();
    m_heap.clear();
  }
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (!m_spilled) {
      if (m_count < N) {
        T* made = ::new (static_cast<void*>(m_storage + m_count * sizeof(T))) T(std::forward<Args>(args)...);
        ++m_count;
        return *made;
      }
      T item(std::forward<Args>(args)...);  // made before the move: `args` may name one of the elements moved
      spill(2 * N);
      return m_heap.emplace_back(std::move(item));
    }
    return m_heap.emplace_back(std::forward<Args>(args)...);
  }
  void push_back(const T& item) { emplace_back(item); }
  void push_back(T&& item) { emplace_back(std::move(item)); }

  friend bool operator==(const InlineVector& a, const InlineVector& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

 private:
  T* in_place() { return std::launder(reinterpret_cast<T*>(m_storage)); }
  const T* in_place() const { return std::launder(reinterpret_cast<const T*>(m_storage)); }
  void destroy_in_place() {
    for (size_t i = 0; i < m_count; ++i) in_place()[i].~T();
    m_count = 0;
  }
  // The elements in place moved to the heap vector (with room for `n`), which holds every element from then on.
  void spill(size_t n) {
    std::vector<T> heap;
    heap.reserve(std::max(n, m_count));
    for (size_t i = 0; i < m_count; ++i) heap.push_back(std::move(in_place()[i]));
    destroy_in_place();
    m_heap = std::move(heap);
    m_spilled = true;
  }
  void append(const InlineVector& other) {
    reserve(size() + other.size());
    for (const T& item : other) push_back(item);
  }
  // `other`'s elements into this empty one, `other` left empty.
  void take(InlineVector&& other) {
    if (other.m_spilled) {
      m_heap = std::move(other.m_heap);
      m_spilled = true;
      other.m_heap = std::vector<T>();
      other.m_spilled = false;
      return;
    }
    for (size_t i = 0; i < other.m_count; ++i) ::new (static_cast<void*>(m_storage + i * sizeof(T))) T(std::move(other.in_place()[i]));
    m_count = other.m_count;
    other.destroy_in_place();
  }

  alignas(T) unsigned char m_storage[N * sizeof(T)];
  size_t m_count = 0;      // elements in place (0 once spilled)
  bool m_spilled = false;  // the elements are in m_heap
  std::vector<T> m_heap;
};

}  // namespace preflight
