/* waitstatus.c - runs a command and prints how it ended, core dump included:
 * "exit N" or "signal N core 0|1".  The shell's $? cannot tell a core. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    pid_t p = fork();
    if (p == 0) {
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    int st;
    if (waitpid(p, &st, 0) != p)
        return 2;
    if (WIFEXITED(st))
        printf("exit %d\n", WEXITSTATUS(st));
    else
        printf("signal %d core %d\n", WTERMSIG(st), WCOREDUMP(st) ? 1 : 0);
    return 0;
}
