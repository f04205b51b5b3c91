#include "cpus.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

unsigned cpus_within_quota(const char *text, unsigned cpus)
{
    unsigned long long quota, period;
    if (sscanf(text, "%llu %llu", &quota, &period) != 2 || quota == 0 || period == 0) {
        return cpus; /* "max ...": no quota */
    }
    unsigned long long allowed = (quota + period - 1) / period;
    return allowed < cpus ? (unsigned)(allowed ? allowed : 1) : cpus;
}

/* The first line of path into buf; false when there is none. */
static bool read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    bool ok = f && fgets(buf, (int)size, f);
    if (f) {
        fclose(f);
    }
    return ok;
}

/* This process's cgroup v2 path ("0::/path" in /proc/self/cgroup) into
 * group; false on a host with v1 only. */
static bool v2_group(char *group, size_t size)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    bool found = false;
    while (f && !found && fgets(group, (int)size, f)) {
        found = strncmp(group, "0::", 3) == 0;
    }
    if (f) {
        fclose(f);
    }
    if (found) {
        group[strcspn(group, "\n")] = '\0';
        memmove(group, group + 3, strlen(group + 3) + 1);
    }
    return found;
}

/* This process's cgroup v2 cpu.max, else v1's quota and period, as a
 * "quota period" line in buf; false when neither is there. */
static bool quota_line(char *buf, size_t size)
{
    char group[512], path[600], quota[32], period[32];
    if (v2_group(group, sizeof(group))) {
        snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", strcmp(group, "/") ? group : "");
        if (read_line(path, buf, size) || read_line("/sys/fs/cgroup/cpu.max", buf, size)) {
            return true;
        }
    }
    if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", quota, sizeof(quota)) &&
        read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", period, sizeof(period)) && quota[0] != '-') {
        snprintf(buf, size, "%.20s %.20s", quota, period);
        return true;
    }
    return false;
}

unsigned cpus_available(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set)
                                                               : online > 0 ? (unsigned)online : 1;
    char line[128];
    if (quota_line(line, sizeof(line))) {
        cpus = cpus_within_quota(line, cpus);
    }
    return cpus ? cpus : 1;
}
