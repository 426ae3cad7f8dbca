// base/file_lock: one writer at a time for a read-merge-write of a user's file (bw --save's device overlay,
// calibrate --save's speed overlay), so that two saves at once each merge into what the other wrote.
#pragma once

#include <string>

#include "base/error.hpp"

namespace preflight {

// An exclusive flock(2) on "<path>.lock", held until the object is destroyed. flock locks belong to the open file
// description, so two processes (or two threads with their own descriptors) take turns. The lock file is never
// removed: removing it would let a third saver lock a new inode while the second still holds the old one. Missing
// parent directories are created; the lock file is opened without following a symbolic link. environment error
// naming the path when it cannot be created or locked.
class FileLock {
 public:
  static Expected<FileLock> acquire(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  FileLock(FileLock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  FileLock& operator=(FileLock&&) = delete;

 private:
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace preflight
