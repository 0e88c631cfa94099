// The metrics of the instance as a whole, beside its traffic's: what it is (build info), where it
// stands (leaving, the last reload), what will run out (certificates, file descriptors).
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include <rivet/version.hpp>

#include "app/operations/metrics_export.hpp"
#include "app/operations/metrics_text.hpp"

namespace rivet::app {

using namespace metrics_text;

namespace {

// The compiler that built this binary, as the build info shows it.
const char* compiler() {
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#else
    return "unknown";
#endif
}

// The entries of /proc/self/fd, the directory's own descriptor excepted.
uint64_t count_open_fds() {
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return 0;
    uint64_t n = 0;
    while (const dirent* e = readdir(dir))
        if (e->d_name[0] != '.') ++n;
    closedir(dir);
    return n > 0 ? n - 1 : 0;
}

}  // namespace

void read_process_stats(Snapshot& s) {
    std::ifstream statm("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    if (statm >> size >> resident) s.rss_bytes = resident * uint64_t(sysconf(_SC_PAGESIZE));
    statm.close();  // before counting descriptors: not one of the server's own
    rusage u;
    if (getrusage(RUSAGE_SELF, &u) == 0)
        s.cpu_seconds = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                        double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    s.open_fds = count_open_fds();
    rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0)
        s.max_fds = files.rlim_cur == RLIM_INFINITY ? 0 : uint64_t(files.rlim_cur);
}

void instance_metrics(std::string& out, const Snapshot& s) {
    family(out, "process_open_fds", "gauge", "Number of open file descriptors.");
    sample(out, "process_open_fds", s.open_fds);
    family(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
    sample(out, "process_max_fds", s.max_fds);

    family(out, "rivet_build_info", "gauge",
           "Always 1; the labels say which build of rivet this is.");
    sample(out,
           std::string("rivet_build_info{version=\"") + RIVET_VERSION_STRING + "\",compiler=\"" +
               label(compiler()) + "\"}",
           1);
    family(out, "rivet_draining", "gauge",
           "1 from the lame duck's start (readiness fails) through the drain; 0 while serving.");
    sample(out, "rivet_draining", s.lifecycle == Lifecycle::Leaving ? 1 : 0);
    family(out, "rivet_config_last_reload_successful", "gauge",
           "Whether the last configuration reload (SIGHUP) was applied (1) or refused (0).");
    sample(out, "rivet_config_last_reload_successful",
           s.last_reload.result == ReloadOutcome::Result::Applied ? 1 : 0);
    family(out, "rivet_config_last_reload_timestamp_seconds", "gauge",
           "When the last configuration reload was tried (the start, before any), Unix time.");
    sample(out, "rivet_config_last_reload_timestamp_seconds", s.last_reload.time_s);
    family(out, "rivet_tls_certificate_expiry_timestamp_seconds", "gauge",
           "The notAfter of each certificate the TLS listener serves, Unix time, by file.");
    for (const auto& c : s.certificates)
        sample(out,
               "rivet_tls_certificate_expiry_timestamp_seconds{file=\"" + label(c.file) + "\"}",
               c.not_after_s);
}

}  // namespace rivet::app
