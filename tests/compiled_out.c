/*
 * compiled_out.c - a program instrumented with every CAP_ macro. The suite
 * builds it twice: with -DCAP_DISABLE, where check_compiled_out.sh requires
 * that the binary define and reference no cap_ symbol and hold no inlined
 * clock read (a shipped build carries no instrumentation, LESSONS.md 7),
 * and without it, as the control that proves the check can see them.
 */
#include <capture/capture.h>

static int work(int n)
{
    CAP_SCOPE("work");
    int sum = 0;
    for (int i = 0; i < n; i++) {
        CAP_BEGIN("inner");
        sum += i;
        CAP_END();
    }
    return sum;
}

int main(int argc, char **argv)
{
    (void)argv;
    CAP_THREAD("main");
    int total = 0;
    for (int f = 0; f < 3; f++) {
        CAP_FRAME_MARK();
        total += work(argc + f);
        CAP_COUNTER("total", total);
    }
    CAP_FRAME_BEGIN();
    CAP_FRAME_END();
    return total == 12345;
}
