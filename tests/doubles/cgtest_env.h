/* cgtest_env.h - the TEST DOUBLES' one reader of their CGTEST_* settings:
 * a whole decimal number, or the default when unset, empty or not a number.
 * Read at each call, so a test can change a setting between calls. */
#ifndef CGTEST_ENV_H
#define CGTEST_ENV_H
#include <stdlib.h>

static inline unsigned long long cgtest_env_num(const char *name, unsigned long long dflt)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;

    if (!s || !*s)
        return dflt;
    v = strtoull(s, &end, 10);
    return *end ? dflt : v;
}
#endif
