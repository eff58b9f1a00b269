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

/* the names API: scopes by id, waits, runtime strings */
static int names(int n)
{
    uint32_t id = cap_name_register_flags("by_id", NULL, 0, CAP_NAME_WAIT);
    CAP_SCOPE_ID(id);
    CAP_BEGIN_ID(id);
    CAP_END();
    cap_scope_begin(id);
    cap_scope_end();
    CAP_WAIT_SCOPE("wait");
    CAP_WAIT_BEGIN("wait_pair");
    CAP_END();
    char buf[16] = "runtime";
    buf[0] = (char)('a' + n % 26);
    CAP_SCOPE(buf);
    return (int)id + buf[0];
}

int main(int argc, char **argv)
{
    (void)argv;
    CAP_THREAD("main");
    int total = 0;
    for (int f = 0; f < 3; f++) {
        CAP_FRAME_MARK();
        total += work(argc + f) + names(f);
        CAP_COUNTER("total", total);
    }
    CAP_FRAME_BEGIN();
    CAP_FRAME_END();
    return total == 12345;
}
