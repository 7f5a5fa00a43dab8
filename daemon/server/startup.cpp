// startup.cpp — see startup.h.
#include "startup.h"
#include "log.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

namespace xmem::server
{

namespace
{
int g_ready_fd = -1;

std::string dir_of(const std::string &p)
{
    auto slash = p.rfind('/');
    return slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
}
} // namespace

int lock_take(const std::string &path, bool force)
{
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        fprintf(stderr,
                "xmemd: cannot open the lock %s: %s (check the lockfile key and that "
                "its directory exists)\n",
                path.c_str(), strerror(errno));
        return -1;
    }
    char old[32] = {0};
    ssize_t n = pread(fd, old, sizeof(old) - 1, 0);
    long old_pid = n > 0 ? strtol(old, nullptr, 10) : 0;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr,
                "xmemd: another xmemd (pid %ld) holds %s; stop it first (systemctl "
                "stop xmemd) or use another lockfile\n",
                old_pid, path.c_str());
        close(fd);
        return -1;
    }
    // We hold the flock, so no xmemd does: a pid left in the file is a crashed daemon's. When
    // that pid is gone (kill -9, OOM, a reboot) the lock is taken over without --force, so a
    // crash needs no operator; a pid that still runs is another program now (pid reuse) or
    // something we cannot judge, and only --force takes over from it.
    bool ours = old_pid == (long)getpid();
    bool dead = old_pid > 0 && kill((pid_t)old_pid, 0) != 0 && errno == ESRCH;
    if (old_pid > 0 && !ours && !dead && !force) {
        fprintf(stderr,
                "xmemd: stale lock %s names pid %ld, which runs but holds no lock; if no "
                "xmemd runs, remove it or start with --force\n",
                path.c_str(), old_pid);
        close(fd);
        return -1;
    }
    if (old_pid > 0 && !ours)
        log_warn("taking over the stale lock %s left by pid %ld%s", path.c_str(), old_pid,
                 dead ? ", which is not running" : " (--force)");
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len) {
        fprintf(stderr, "xmemd: cannot write our pid into %s: %s\n", path.c_str(), strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

bool socket_dir_safe(const std::string &socket_path)
{
    std::string dir = dir_of(socket_path);
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) {
        fprintf(stderr, "xmemd: socket directory %s: %s (create it: install -d -m 0755 %s)\n",
                dir.c_str(), strerror(errno), dir.c_str());
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "xmemd: socket directory %s is not a directory\n", dir.c_str());
        return false;
    }
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        fprintf(stderr,
                "xmemd: socket directory %s is owned by uid %u, not by root or us; "
                "fix: chown root %s\n",
                dir.c_str(), (unsigned)st.st_uid, dir.c_str());
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        fprintf(stderr,
                "xmemd: socket directory %s is writable by group or others (mode "
                "%04o), so anyone could replace the socket; fix: chmod 0755 %s\n",
                dir.c_str(), (unsigned)(st.st_mode & 07777), dir.c_str());
        return false;
    }
    struct stat sst;
    if (lstat(socket_path.c_str(), &sst) == 0 && !S_ISSOCK(sst.st_mode)) {
        fprintf(stderr,
                "xmemd: %s exists and is not a socket; remove it or choose another "
                "socket path\n",
                socket_path.c_str());
        return false;
    }
    return true;
}

void detach()
{
    int p[2];
    if (pipe(p) != 0) {
        perror("xmemd: pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("xmemd: fork");
        exit(1);
    }
    if (pid > 0) {
        close(p[1]);
        char c;
        if (read(p[0], &c, 1) == 1)
            _exit(0);
        int status = 0;
        waitpid(pid, &status, 0);
        _exit(WIFEXITED(status) ? (WEXITSTATUS(status) ? WEXITSTATUS(status) : 1) : 1);
    }
    close(p[0]);
    g_ready_fd = p[1];
    setsid();
    if (chdir("/") != 0) {
        // Stay where we are; no path we use is relative.
    }
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        close(devnull);
    }
}

void detach_ready()
{
    if (g_ready_fd >= 0) {
        if (write(g_ready_fd, "r", 1) != 1) {
            // The parent is gone; nothing to tell.
        }
        close(g_ready_fd);
        g_ready_fd = -1;
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0) {
            dup2(devnull, 2); // stderr was kept open until now for start-up errors
            close(devnull);
        }
    }
}

void notify_ready()
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || (path[0] != '/' && path[0] != '@') ||
        strlen(path) >= sizeof(sockaddr_un::sun_path))
        return;
    struct sockaddr_un sa = {};
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    if (sa.sun_path[0] == '@')
        sa.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    const char msg[] = "READY=1";
    sendto(fd, msg, sizeof(msg) - 1, 0, reinterpret_cast<sockaddr *>(&sa),
           (socklen_t)(offsetof(sockaddr_un, sun_path) + strlen(path)));
    close(fd);
}

int loop_live_handles(uv_loop_t *loop)
{
    int n = 0;
    uv_walk(
        loop,
        [](uv_handle_t *h, void *arg) {
            if (uv_is_closing(h))
                return;
            ++*static_cast<int *>(arg);
            log_error("handle still open at exit: %s", uv_handle_type_name(uv_handle_get_type(h)));
        },
        &n);
    return n;
}

} // namespace xmem::server
