#include "packer/base/cpu_count.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "tests/support/temp_dir.h"

using namespace kpack;
using test::TempDir;

TEST_CASE("a cgroup's cpu.max in CPUs, rounded up") {
  CHECK(cpus_of_quota("max 100000\n") == std::nullopt);
  CHECK(cpus_of_quota("200000 100000\n") == 2u);
  CHECK(cpus_of_quota("150000 100000\n") == 2u);
  CHECK(cpus_of_quota("50000 100000\n") == 1u);
  CHECK(cpus_of_quota("1000 100000") == 1u);
  CHECK(cpus_of_quota("") == std::nullopt);
  CHECK(cpus_of_quota("12x 100000") == std::nullopt);
  CHECK(cpus_of_quota("100000 0") == std::nullopt);
}

TEST_CASE("this process's cgroup and the cgroup2 mount") {
  CHECK(cgroup_v2_path("0::/user.slice/session-1.scope\n") == "/user.slice/session-1.scope");
  // A hybrid system: v1 controllers first, the unified hierarchy's line last.
  CHECK(cgroup_v2_path("4:memory:/a\n1:cpu:/\n0::/ci/job\n") == "/ci/job");
  CHECK(cgroup_v2_path("4:memory:/a\n1:cpu:/\n") == std::nullopt);

  std::optional<CgroupMount> mount = cgroup2_mount(
      "25 30 0:23 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
      "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n");
  REQUIRE(mount);
  CHECK(mount->root == "/");
  CHECK(mount->mount_point == "/sys/fs/cgroup/unified");
  CHECK_FALSE(cgroup2_mount("25 30 0:23 / /sys rw - sysfs sysfs rw\n"));
}

TEST_CASE("the tightest quota of a cgroup and its parents") {
  TempDir dir;
  std::filesystem::create_directories(dir / "ci/job/step");
  auto write = [&dir](const std::string& name, const std::string& text) {
    dir.write(name, std::vector<uint8_t>(text.begin(), text.end()));
  };
  write("ci/cpu.max", "300000 100000\n");
  write("ci/job/cpu.max", "max 100000\n");
  write("ci/job/step/cpu.max", "max 100000\n");
  CgroupMount mount{"/", dir.path()};
  CHECK(cgroup_cpu_limit(mount, "/ci/job/step") == 3u);  // the grandparent's quota holds
  write("ci/job/step/cpu.max", "150000 100000\n");
  CHECK(cgroup_cpu_limit(mount, "/ci/job/step") == 2u);  // its own, tighter
  CHECK(cgroup_cpu_limit(mount, "/elsewhere") == std::nullopt);
  // Inside a cgroup namespace the mount shows /ci's subtree at its mount point.
  CHECK(cgroup_cpu_limit(CgroupMount{"/ci", dir / "ci"}, "/ci/job") == 3u);

  unsigned cpus = usable_cpus();
  CHECK(cpus >= 1);
}
