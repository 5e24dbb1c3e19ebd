/* A crash-point interposer (LD_PRELOAD), in the manner of SQLite's crash tests and ALICE:
 * it counts the process's mutating file operations on paths under PROSEC_KILL_ROOT and
 * kills the process with SIGKILL just before the K-th one (PROSEC_KILL_AT=K). With
 * PROSEC_KILL_TEAR=1 a write chosen as the K-th is torn instead: half of it reaches the
 * file, then the process dies. PROSEC_KILL_AT=0 only counts, and writes the total to
 * PROSEC_KILL_COUNT at exit. Only the process that loaded it first is armed: it removes
 * its variables (and LD_PRELOAD) from the environment its children inherit. Loaded but
 * not armed, it counts nothing until prosec_kill_arm is called. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long kill_at = -1;
static int tear = 0;
static int trace = 0;
static long counter = 0;
static char root[PATH_MAX];
static size_t root_len = 0;
static char count_file[PATH_MAX];

__attribute__((constructor)) static void arm(void) {
    const char *at = getenv("PROSEC_KILL_AT");
    const char *r = getenv("PROSEC_KILL_ROOT");
    const char *count = getenv("PROSEC_KILL_COUNT");
    if (at && r && strlen(r) < sizeof root) {
        kill_at = strtol(at, NULL, 10);
        strcpy(root, r);
        root_len = strlen(root);
        while (root_len > 1 && root[root_len - 1] == '/') root[--root_len] = 0;
        tear = getenv("PROSEC_KILL_TEAR") != NULL;
        trace = getenv("PROSEC_KILL_TRACE") != NULL;
        if (count && strlen(count) < sizeof count_file) strcpy(count_file, count);
    }
    unsetenv("PROSEC_KILL_AT");
    unsetenv("PROSEC_KILL_ROOT");
    unsetenv("PROSEC_KILL_TEAR");
    unsetenv("PROSEC_KILL_COUNT");
    unsetenv("PROSEC_KILL_TRACE");
    unsetenv("LD_PRELOAD");
}

/* For a warm parent that forks one child per command (zygote.py): the child arms itself
 * (k = 0 counts only) and reads its count before it ends with _exit. */
void prosec_kill_arm(long k, const char *r, int tear_writes) {
    if (strlen(r) >= sizeof root) return;
    strcpy(root, r);
    root_len = strlen(root);
    while (root_len > 1 && root[root_len - 1] == '/') root[--root_len] = 0;
    tear = tear_writes;
    __atomic_store_n(&counter, 0, __ATOMIC_SEQ_CST);
    kill_at = k;
}

long prosec_kill_count(void) { return __atomic_load_n(&counter, __ATOMIC_SEQ_CST); }

__attribute__((destructor)) static void report(void) {
    if (kill_at != 0 || !count_file[0]) return;
    char text[32];
    int n = snprintf(text, sizeof text, "%ld\n", __atomic_load_n(&counter, __ATOMIC_SEQ_CST));
    int fd = (int)syscall(SYS_openat, AT_FDCWD, count_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        (void)syscall(SYS_write, fd, text, (size_t)n);
        (void)syscall(SYS_close, fd);
    }
}

static int under_root(const char *path) {
    return root_len && strncmp(path, root, root_len) == 0 &&
           (path[root_len] == '/' || path[root_len] == 0);
}

static int path_of_fd(int fd, char *out) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, PATH_MAX - 1);
    if (n < 0) return 0;
    out[n] = 0;
    return 1;
}

static int at_path(int dirfd, const char *path, char *out) {
    if (!path) return 0;
    if (path[0] == '/') {
        snprintf(out, PATH_MAX, "%s", path);
        return 1;
    }
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
        if (!getcwd(base, sizeof base)) return 0;
    } else if (!path_of_fd(dirfd, base)) {
        return 0;
    }
    snprintf(out, PATH_MAX, "%s/%s", base, path);
    return 1;
}

/* 1 when this operation is the one to die before (the caller tears or kills) */
static int next_op(void) {
    long n = __atomic_add_fetch(&counter, 1, __ATOMIC_SEQ_CST);
    return kill_at > 0 && n == kill_at;
}

static void die(void) {
    syscall(SYS_kill, syscall(SYS_getpid), SIGKILL);
    for (;;) pause();
}

static void at_op(int dirfd, const char *path) {
    char full[PATH_MAX];
    if (kill_at < 0 || !at_path(dirfd, path, full) || !under_root(full)) return;
    if (trace) dprintf(2, "op %s\n", full + root_len);
    if (next_op()) die();
}

static int fd_counted(int fd) {
    char full[PATH_MAX];
    struct stat st;
    if (kill_at < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (!path_of_fd(fd, full) || !under_root(full)) return 0;
    if (trace) dprintf(2, "op fd %s\n", full + root_len);
    return 1;
}

static void at_fd_op(int fd) {
    if (fd_counted(fd) && next_op()) die();
}

#define REAL(name) static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static int mutates(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_LIKE(name)                                                  \
    int name(const char *path, int flags, ...) {                         \
        va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap); \
        REAL(name);                     \
        if (mutates(flags)) at_op(AT_FDCWD, path);                       \
        return real_##name(path, flags, mode);                           \
    }
OPEN_LIKE(open)
OPEN_LIKE(open64)

#define OPENAT_LIKE(name)                                                \
    int name(int dirfd, const char *path, int flags, ...) {              \
        va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap); \
        REAL(name);                \
        if (mutates(flags)) at_op(dirfd, path);                          \
        return real_##name(dirfd, path, flags, mode);                    \
    }
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

static ssize_t torn(int fd, const void *buf, size_t count,
                    ssize_t (*wr)(int, const void *, size_t)) {
    if (tear && count > 1) wr(fd, buf, count / 2);
    die();
    return -1;
}

ssize_t write(int fd, const void *buf, size_t count) {
    REAL(write);
    if (fd_counted(fd) && next_op()) return torn(fd, buf, count, real_write);
    return real_write(fd, buf, count);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    REAL(pwrite64);
    if (fd_counted(fd) && next_op()) {
        if (tear && count > 1) real_pwrite64(fd, buf, count / 2, offset);
        die();
    }
    return real_pwrite64(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    return pwrite64(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int n) {
    REAL(writev);
    at_fd_op(fd);
    return real_writev(fd, iov, n);
}

int ftruncate(int fd, off_t length) {
    REAL(ftruncate);
    at_fd_op(fd);
    return real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) { return ftruncate(fd, length); }

int truncate(const char *path, off_t length) {
    REAL(truncate);
    at_op(AT_FDCWD, path);
    return real_truncate(path, length);
}

int rename(const char *old, const char *new_) {
    REAL(rename);
    at_op(AT_FDCWD, old);
    return real_rename(old, new_);
}

int renameat(int olddir, const char *old, int newdir, const char *new_) {
    REAL(renameat);
    at_op(olddir, old);
    return real_renameat(olddir, old, newdir, new_);
}

int renameat2(int olddir, const char *old, int newdir, const char *new_, unsigned flags) {
    REAL(renameat2);
    at_op(olddir, old);
    return real_renameat2(olddir, old, newdir, new_, flags);
}

int unlink(const char *path) {
    REAL(unlink);
    at_op(AT_FDCWD, path);
    return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(unlinkat);
    at_op(dirfd, path);
    return real_unlinkat(dirfd, path, flags);
}

int rmdir(const char *path) {
    REAL(rmdir);
    at_op(AT_FDCWD, path);
    return real_rmdir(path);
}

int mkdir(const char *path, mode_t mode) {
    REAL(mkdir);
    at_op(AT_FDCWD, path);
    return real_mkdir(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
    REAL(mkdirat);
    at_op(dirfd, path);
    return real_mkdirat(dirfd, path, mode);
}

int symlink(const char *target, const char *path) {
    REAL(symlink);
    at_op(AT_FDCWD, path);
    return real_symlink(target, path);
}

int symlinkat(const char *target, int dirfd, const char *path) {
    REAL(symlinkat);
    at_op(dirfd, path);
    return real_symlinkat(target, dirfd, path);
}

int chmod(const char *path, mode_t mode) {
    REAL(chmod);
    at_op(AT_FDCWD, path);
    return real_chmod(path, mode);
}

int fchmodat(int dirfd, const char *path, mode_t mode, int flags) {
    REAL(fchmodat);
    at_op(dirfd, path);
    return real_fchmodat(dirfd, path, mode, flags);
}

int fchmod(int fd, mode_t mode) {
    REAL(fchmod);
    at_fd_op(fd);
    return real_fchmod(fd, mode);
}
