/* assert_near - a cmocka assertion that two doubles agree within a
 * tolerance, naming the expression and both values when they do not.
 * Include after <cmocka.h> and <math.h>. */
#ifndef TESTS_ASSERT_NEAR_H
#define TESTS_ASSERT_NEAR_H

#define assert_near(a, b, tol)                                              \
    do {                                                                    \
        double a_ = (a), b_ = (b);                                          \
        if (!(fabs(a_ - b_) <= (tol)))                                      \
            fail_msg("%s = %.9g, expected %.9g +- %g", #a, a_, b_,         \
                     (double)(tol));                                        \
    } while (0)

#endif
