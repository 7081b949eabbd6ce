/* kinspect-mock: librdkafka's built-in mock cluster as a test broker for `kinspect probe` and
 * `kinspect fuzz`, on loopback only, for a bounded time.
 *
 *   kinspect-mock MAX_SECONDS BROKERS [TOPIC:PARTITIONS ...]
 *
 * Prints one line "BOOTSTRAP host:port[,host:port...]" on stdout once the cluster listens, then
 * runs until SIGTERM/SIGINT, until stdin reaches end of file (when stdin is a
 * pipe: the parent that holds its other end died or closed it), or until MAX_SECONDS pass.
 * The rd_kafka_t handle the mock needs never connects anywhere: it has no bootstrap servers.
 * Exit status: 0 after a clean stop, 1 when the cluster cannot be made, 2 for usage.
 *
 * Ports: librdkafka 2.0.2's mock binds each broker to 127.0.0.1 port 0 (kernel-chosen) and has
 * no API to choose. With KINSPECT_MOCK_PORT=P in the environment, this program's own bind()
 * (which the dynamic linker resolves before libc's, for librdkafka too) gives the k-th bind to
 * a loopback port 0 the port P+k instead, so a broker restarted after a crash comes back at the
 * same address (`kinspect fuzz --restart-cmd`). Without it, binds are left alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t stopping = 0;

/* See "Ports" above. Only binds to port 0 on 127.0.0.1 or ::1 are changed. */
int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*libc_bind)(int, const struct sockaddr *, socklen_t) = NULL;
    static int next = 0;
    if (!libc_bind) libc_bind = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
    if (!libc_bind) {
        errno = ENOSYS;
        return -1;
    }
    const char *base = getenv("KINSPECT_MOCK_PORT");
    long p = base ? strtol(base, NULL, 10) : 0;
    if (p < 1 || p + next > 65535 || !addr) return libc_bind(fd, addr, len);
    if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        struct sockaddr_in a;
        memcpy(&a, addr, sizeof a);
        if (a.sin_port == 0 && ntohl(a.sin_addr.s_addr) == INADDR_LOOPBACK) {
            a.sin_port = htons((unsigned short)(p + next++));
            return libc_bind(fd, (const struct sockaddr *)&a, sizeof a);
        }
    } else if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 a;
        memcpy(&a, addr, sizeof a);
        if (a.sin6_port == 0 && IN6_IS_ADDR_LOOPBACK(&a.sin6_addr)) {
            a.sin6_port = htons((unsigned short)(p + next++));
            return libc_bind(fd, (const struct sockaddr *)&a, sizeof a);
        }
    }
    return libc_bind(fd, addr, len);
}

static void on_signal(int sig) {
    (void)sig;
    stopping = 1;
}

static int usage(const char *argv0) {
    fprintf(stderr, "usage: %s MAX_SECONDS BROKERS [TOPIC:PARTITIONS ...]\n", argv0);
    return 2;
}

/* A topic argument "name:partitions" (partitions default to 1). */
static int create_topic(rd_kafka_mock_cluster_t *mc, const char *arg, int brokers) {
    char name[256];
    const char *colon = strchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    int partitions = colon ? atoi(colon + 1) : 1;
    if (len == 0 || len >= sizeof name || partitions < 1) {
        fprintf(stderr, "kinspect-mock: bad topic argument '%s'\n", arg);
        return -1;
    }
    memcpy(name, arg, len);
    name[len] = '\0';
    rd_kafka_resp_err_t err =
        rd_kafka_mock_topic_create(mc, name, partitions, brokers < 3 ? brokers : 3);
    if (err) {
        fprintf(stderr, "kinspect-mock: topic %s: %s\n", name, rd_kafka_err2str(err));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return usage(argv[0]);
    char *end = NULL;
    long max_seconds = strtol(argv[1], &end, 10);
    if (*end || max_seconds < 1) return usage(argv[0]);
    long brokers = strtol(argv[2], &end, 10);
    if (*end || brokers < 1 || brokers > 16) return usage(argv[0]);

    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    /* Warnings and errors only: the mock logs every connection at the default level. */
    rd_kafka_conf_set(conf, "log_level", "4", errstr, sizeof errstr);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!rk) {
        fprintf(stderr, "kinspect-mock: rd_kafka_new: %s\n", errstr);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, (int)brokers);
    if (!mc) {
        fprintf(stderr, "kinspect-mock: rd_kafka_mock_cluster_new failed\n");
        rd_kafka_destroy(rk);
        return 1;
    }
    int status = 0;
    for (int i = 3; i < argc && status == 0; i++)
        if (create_topic(mc, argv[i], (int)brokers) != 0) status = 1;

    if (status == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);

        printf("BOOTSTRAP %s\n", rd_kafka_mock_cluster_bootstraps(mc));
        fflush(stdout);

        struct stat st;
        int watch_stdin = fstat(STDIN_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);
        time_t deadline = time(NULL) + max_seconds;
        while (!stopping && time(NULL) < deadline) {
            if (watch_stdin) {
                struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
                int r = poll(&p, 1, 100);
                if (r > 0) {
                    char buf[256];
                    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
                    if (n == 0 || (n < 0 && errno != EINTR)) break;
                }
            } else {
                usleep(100 * 1000);
            }
        }
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return status;
}
