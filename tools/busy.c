/* busy: run a command beside one CPU-bound process per core, as on a shared login node.
 *
 *   busy [-n N] [--] command [args...]
 *
 * Starts N busy loops (default: the cores this process may run on, sched_getaffinity), runs
 * the command, stops the loops when it ends and exits with its status (128 + signal if it was
 * killed). The loops cannot outlive busy: each asks the kernel for SIGKILL when its parent
 * dies (PR_SET_PDEATHSIG), so a Ctrl-C, a kill -9 of busy or a crash leaves none behind; the
 * command gets SIGTERM then.
 * SIGINT, SIGTERM and SIGHUP sent to busy alone go on to the command. `make test-loaded`
 * runs `make test` under it (docs/install.md, "A loaded machine"). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUSY_MAX 1024

static volatile sig_atomic_t child_pid;

static void forward(int sig) {
  if (child_pid > 0) kill((pid_t)child_pid, sig);
}

static void usage(void) {
  fprintf(stderr, "usage: busy [-n N] [--] command [args...]\n"
                  "  runs command beside N busy loops (default: one per usable core)\n");
  exit(2);
}

/* A loop that only burns CPU; dies with its parent, even a parent killed by SIGKILL. */
static pid_t start_loop(pid_t parent) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(0); /* the parent died before prctl */
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  volatile unsigned long x = 0;
  for (;;) x++;
}

int main(int argc, char **argv) {
  int n = 0, a = 1;
  if (a < argc && !strcmp(argv[a], "-n")) {
    if (a + 1 >= argc) usage();
    char *end;
    long v = strtol(argv[a + 1], &end, 10);
    if (*end || v < 0 || v > BUSY_MAX) {
      fprintf(stderr, "busy: -n %s: the number of busy loops must be 0 to %d\n", argv[a + 1],
              BUSY_MAX);
      return 2;
    }
    n = (int)v;
    a += 2;
  } else {
    cpu_set_t set;
    n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                     : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
  }
  if (a < argc && !strcmp(argv[a], "--")) a++;
  if (a >= argc) usage();

  /* Forward before any child exists: no window in which a signal is lost. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  pid_t self = getpid(), loops[BUSY_MAX];
  int started = 0;
  for (int i = 0; i < n; i++) {
    loops[started] = start_loop(self);
    if (loops[started] < 0) {
      perror("busy: fork");
      break;
    }
    started++;
  }
  fprintf(stderr, "busy: %d busy loop%s (pids", started, started == 1 ? "" : "s");
  for (int i = 0; i < started; i++) fprintf(stderr, " %d", (int)loops[i]);
  fprintf(stderr, ") beside: %s\n", argv[a]);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int status = 0, rc;
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM); /* the command's run means nothing without the load */
    if (getppid() != self) _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    execvp(argv[a], argv + a);
    fprintf(stderr, "busy: %s: %s\n", argv[a], strerror(errno));
    _exit(127);
  }
  if (pid < 0) {
    perror("busy: fork");
    rc = 2;
  } else {
    child_pid = pid;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  for (int i = 0; i < started; i++) kill(loops[i], SIGKILL);
  for (int i = 0; i < started; i++) waitpid(loops[i], NULL, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  fprintf(stderr, "busy: %s exited with %d after %.1f s beside %d busy loop%s\n", argv[a], rc,
          (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), started,
          started == 1 ? "" : "s");
  return rc;
}
