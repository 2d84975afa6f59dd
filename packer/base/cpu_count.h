// How many threads kpack compresses on by default: the CPUs this process may run on, which on a
// shared machine, in a container or a CI job is fewer than the machine has.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kpack {

// The CPUs in this process's affinity mask (taskset, cpusets), lowered to its cgroup v2 CPU quota;
// at least 1.
unsigned usable_cpus();

// The parts, for tests. The CPUs a cgroup's cpu.max allows, rounded up: "150000 100000" is 2,
// "max 100000" none.
std::optional<unsigned> cpus_of_quota(std::string_view cpu_max);

// This process's cgroup v2 path ("/a/b") from /proc/self/cgroup's text (its "0::" line).
std::optional<std::string> cgroup_v2_path(std::string_view proc_self_cgroup);

// Where cgroup2 is mounted and which cgroup is that mount's root, from /proc/self/mountinfo's text.
struct CgroupMount {
  std::string root;         // the cgroup shown at the mount point, "/" unless in a namespace
  std::string mount_point;  // "/sys/fs/cgroup", or "/sys/fs/cgroup/unified" on hybrid systems
};
std::optional<CgroupMount> cgroup2_mount(std::string_view mountinfo);

// The tightest cpu.max quota of `cgroup` and its ancestors, read under `mount`.
std::optional<unsigned> cgroup_cpu_limit(const CgroupMount& mount, const std::string& cgroup);

}  // namespace kpack
