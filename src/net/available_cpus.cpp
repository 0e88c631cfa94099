#include "net/available_cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rivet::net {

namespace {

namespace fs = std::filesystem;

enum class CgroupVersion { V1, V2 };

// Where one hierarchy is mounted: its mount point, and which cgroup its root is.
struct CgroupMount {
    fs::path mount_point;
    std::string mount_root;
};

std::vector<std::string> split(std::string_view text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        parts.emplace_back(text.substr(start, end - start));
        if (end == std::string_view::npos) return parts;
        start = end + 1;
    }
}

bool has_item(std::string_view list, std::string_view item) {
    for (const auto& part : split(list, ','))
        if (part == item) return true;
    return false;
}

fs::path under(const fs::path& root, const std::string& absolute) {
    return root / fs::path(absolute).relative_path();
}

// mountinfo: "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER_OPTIONS".
std::optional<CgroupMount> find_mount(const fs::path& root, CgroupVersion version) {
    std::ifstream in(root / "proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        size_t dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        std::istringstream head(line.substr(0, dash)), tail(line.substr(dash + 3));
        std::string id, parent, device, mount_root, mount_point, fstype, source, super_options;
        if (!(head >> id >> parent >> device >> mount_root >> mount_point)) continue;
        if (!(tail >> fstype >> source >> super_options)) continue;
        bool wanted = version == CgroupVersion::V2
                          ? fstype == "cgroup2"
                          : fstype == "cgroup" && has_item(super_options, "cpu");
        if (wanted) return CgroupMount{under(root, mount_point), mount_root};
    }
    return std::nullopt;
}

// /proc/self/cgroup: "ID:CONTROLLERS:PATH"; v2's line is "0::PATH".
std::optional<std::string> own_cgroup(const fs::path& root, CgroupVersion version) {
    std::ifstream in(root / "proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        size_t first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
        bool wanted =
            version == CgroupVersion::V2 ? line.starts_with("0::") : has_item(controllers, "cpu");
        if (wanted) return line.substr(second + 1);
    }
    return std::nullopt;
}

std::optional<std::string> read_line(const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    return line;
}

std::optional<unsigned> quota_in(const fs::path& dir, CgroupVersion version) {
    if (version == CgroupVersion::V2) {
        auto cpu_max = read_line(dir / "cpu.max");
        return cpu_max ? cpus_of_cpu_max(*cpu_max) : std::nullopt;
    }
    auto quota = read_line(dir / "cpu.cfs_quota_us"), period = read_line(dir / "cpu.cfs_period_us");
    if (!quota || !period) return std::nullopt;
    try {
        return cpus_of_quota(std::stoll(*quota), std::stoll(*period));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The tightest quota from the process's cgroup up to the hierarchy's root: a parent's quota
// bounds every child's (a container's limit often sits a level or two above the process).
std::optional<unsigned> hierarchy_quota(const fs::path& root, CgroupVersion version) {
    auto mount = find_mount(root, version);
    auto cgroup = own_cgroup(root, version);
    if (!mount || !cgroup) return std::nullopt;
    // The cgroup path is from the hierarchy's root; the mount shows it from mount_root down
    // (a container's own cgroup mounted as its /sys/fs/cgroup).
    std::string_view relative = *cgroup;
    std::string_view mount_root = mount->mount_root;
    if (mount_root != "/") {
        bool inside = relative.starts_with(mount_root) &&
                      (relative.size() == mount_root.size() || relative[mount_root.size()] == '/');
        // Outside what is mounted (a cgroup namespace's view): the mounted root is ours.
        relative = inside ? relative.substr(mount_root.size()) : std::string_view("/");
    }
    fs::path dir = mount->mount_point / fs::path(relative).relative_path();
    fs::path top = mount->mount_point.lexically_normal();
    std::optional<unsigned> tightest;
    for (dir = dir.lexically_normal();; dir = dir.parent_path()) {
        if (auto quota = quota_in(dir, version); quota && (!tightest || *quota < *tightest))
            tightest = quota;
        if (dir == top || dir.parent_path() == dir || !dir.native().starts_with(top.native()))
            break;
    }
    return tightest;
}

unsigned affinity_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        if (count > 0) return unsigned(count);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::optional<unsigned> cpus_of_quota(long long quota_us, long long period_us) {
    if (quota_us <= 0 || period_us <= 0) return std::nullopt;
    return unsigned(std::max<long long>(1, (quota_us + period_us - 1) / period_us));
}

std::optional<unsigned> cpus_of_cpu_max(std::string_view cpu_max) {
    std::istringstream in{std::string(cpu_max)};
    std::string quota;
    long long period = 0;
    if (!(in >> quota >> period) || quota == "max") return std::nullopt;
    try {
        return cpus_of_quota(std::stoll(quota), period);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

unsigned cpus_from(unsigned affinity, std::optional<unsigned> quota) {
    unsigned cpus = quota ? std::min(affinity, *quota) : affinity;
    return std::max(1u, cpus);
}

std::optional<unsigned> cgroup_cpu_quota(const fs::path& root) {
    // A host has one version or both (hybrid); the tighter one holds.
    auto v2 = hierarchy_quota(root, CgroupVersion::V2);
    auto v1 = hierarchy_quota(root, CgroupVersion::V1);
    if (v1 && v2) return std::min(*v1, *v2);
    return v2 ? v2 : v1;
}

unsigned available_cpus() {
    static const unsigned cpus = cpus_from(affinity_count(), cgroup_cpu_quota());
    return cpus;
}

}  // namespace rivet::net
