#include "packer/base/cpu_count.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace kpack {

namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CPUs in the affinity mask, with a mask as large as the kernel's (beyond 1024 CPUs too).
std::optional<unsigned> affinity_cpus() {
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) return std::nullopt;
    size_t size = CPU_ALLOC_SIZE(cpus);
    int got = sched_getaffinity(0, size, set);
    int count = got == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (got == 0) return count > 0 ? std::optional<unsigned>(count) : std::nullopt;
    if (errno != EINVAL) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<unsigned> cpus_of_quota(std::string_view cpu_max) {
  std::istringstream words{std::string(cpu_max)};
  std::string quota;
  unsigned long long period = 0;
  if (!(words >> quota >> period) || quota == "max" || period == 0) return std::nullopt;
  size_t used = 0;
  unsigned long long microseconds = 0;
  try {
    microseconds = std::stoull(quota, &used, 10);
  } catch (...) {
    return std::nullopt;
  }
  if (used != quota.size()) return std::nullopt;
  unsigned long long cpus = (microseconds + period - 1) / period;
  return static_cast<unsigned>(std::clamp<unsigned long long>(cpus, 1, 1u << 20));
}

std::optional<std::string> cgroup_v2_path(std::string_view proc_self_cgroup) {
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return std::nullopt;
}

std::optional<CgroupMount> cgroup2_mount(std::string_view mountinfo) {
  // "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS"
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || dash + 1 == fields.end() || dash[1] != "cgroup2") continue;
    return CgroupMount{fields[3], fields[4]};
  }
  return std::nullopt;
}

std::optional<unsigned> cgroup_cpu_limit(const CgroupMount& mount, const std::string& cgroup) {
  // The process's path is from the hierarchy's root; the mount shows mount.root's subtree.
  std::string path = cgroup;
  if (mount.root != "/") {
    if (path.rfind(mount.root, 0) != 0) return std::nullopt;
    path = path.substr(mount.root.size());
  }
  std::optional<unsigned> tightest;
  while (true) {
    if (std::optional<std::string> text = read_text(mount.mount_point + path + "/cpu.max"))
      if (std::optional<unsigned> cpus = cpus_of_quota(*text)) tightest = std::min(tightest.value_or(*cpus), *cpus);
    size_t slash = path.rfind('/');
    if (path.empty() || slash == std::string::npos) break;
    path.erase(slash);
  }
  return tightest;
}

unsigned usable_cpus() {
  unsigned cpus = affinity_cpus().value_or(std::max(1u, std::thread::hardware_concurrency()));
  std::optional<std::string> cgroup = read_text("/proc/self/cgroup");
  std::optional<std::string> mountinfo = read_text("/proc/self/mountinfo");
  std::optional<std::string> path = cgroup ? cgroup_v2_path(*cgroup) : std::nullopt;
  std::optional<CgroupMount> mount = mountinfo ? cgroup2_mount(*mountinfo) : std::nullopt;
  if (path && mount)
    if (std::optional<unsigned> quota = cgroup_cpu_limit(*mount, *path)) cpus = std::min(cpus, *quota);
  return std::max(1u, cpus);
}

}  // namespace kpack
