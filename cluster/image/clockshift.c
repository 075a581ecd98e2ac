/*
 * clockshift: moves a process's wall clock by an offset read from a file,
 * for deadbolt's clock-jump fault.
 *
 * Why not libfaketime: Debian's redis-server links jemalloc, which reads
 * the clock while libfaketime is still initialising; libfaketime then
 * refuses the call and Redis hangs at start (libfaketime issues #130, #327,
 * unfixed upstream). This shim never allocates and never calls dlsym: it
 * reads clocks and the offset file with raw system calls.
 *
 * Only CLOCK_REALTIME and its variants move; CLOCK_MONOTONIC stays real, so
 * Redis's event loop keeps its timers and only what Redis reads as wall time
 * (key expiry among it) jumps. The file holds signed nanoseconds ("+60000000000");
 * it is re-read at most every 100 ms of monotonic time.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define RECHECK_NS 100000000LL

static long long offset_ns;
static long long next_check_ns;

static long long ns_of(const struct timespec *ts) {
  return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static long long mono_ns(void) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return ns_of(&ts);
}

static const char *offset_path(void) {
  const char *p = getenv("CLOCKSHIFT_FILE");
  return p ? p : "/tmp/clock.offset";
}

static void refresh(void) {
  long long now = mono_ns();
  if (now < __atomic_load_n(&next_check_ns, __ATOMIC_RELAXED))
    return;
  __atomic_store_n(&next_check_ns, now + RECHECK_NS, __ATOMIC_RELAXED);
  int fd = syscall(SYS_openat, AT_FDCWD, offset_path(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return; /* no file: keep the last offset (0 at start) */
  char buf[40];
  long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0)
    return;
  buf[n] = 0;
  const char *p = buf;
  int neg = 0;
  if (*p == '+' || *p == '-')
    neg = *p++ == '-';
  if (*p < '0' || *p > '9')
    return; /* half-written or garbage: keep the last offset */
  long long v = 0;
  while (*p >= '0' && *p <= '9')
    v = v * 10 + (*p++ - '0');
  __atomic_store_n(&offset_ns, neg ? -v : v, __ATOMIC_RELAXED);
}

static int shifted(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

static void shift(struct timespec *ts) {
  refresh();
  long long t = ns_of(ts) + __atomic_load_n(&offset_ns, __ATOMIC_RELAXED);
  ts->tv_sec = t / 1000000000LL;
  ts->tv_nsec = t % 1000000000LL;
  if (ts->tv_nsec < 0) {
    ts->tv_sec--;
    ts->tv_nsec += 1000000000LL;
  }
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  long r = syscall(SYS_clock_gettime, id, ts);
  if (r == 0 && shifted(id))
    shift(ts);
  return (int)r;
}

/* glibc declares tv nonnull, yet callers pass NULL in practice. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"
int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  (void)tz;
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0)
    return -1;
  shift(&ts);
  if (tv) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts);
  shift(&ts);
  if (out)
    *out = ts.tv_sec;
  return ts.tv_sec;
}
