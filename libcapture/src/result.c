/* result.c - names and messages of cap_result, from CAP_RESULT_LIST. */
#include "capture/cap_result.h"

const char *cap_result_name(cap_result r)
{
    switch (r) {
#define CAP__NAME(name, value, msg)                                            \
    case name:                                                                 \
        return #name;
        CAP_RESULT_LIST(CAP__NAME)
#undef CAP__NAME
    }
    return "CAP_E_UNKNOWN";
}

const char *cap_result_message(cap_result r)
{
    switch (r) {
#define CAP__MSG(name, value, msg)                                             \
    case name:                                                                 \
        return msg;
        CAP_RESULT_LIST(CAP__MSG)
#undef CAP__MSG
    }
    return "unknown error";
}
