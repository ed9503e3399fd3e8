/* table.c - the rule table: one row of rules.def per rule, in its order
 * (the first rule of a group that matches wins; tests/report/t_precedence.sh
 * rebuilds this file with two rows swapped).  The FAILURE rows are
 * failure.c's. */
#include "model/capture.h"
#include "rules/match.h"

#define RULE(id, layer, sev, groups, pattern, match, title, symptom, cause, fix) \
    {#id, layer, sev, groups, pattern, match, title, symptom, cause, fix},
#define FAILURE(pattern, text)
const struct rule rules[] = {
#include "rules.def"
};
#undef RULE
#undef FAILURE
const size_t n_rules = sizeof rules / sizeof rules[0];

void rules_keep_events(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    for (size_t i = 0; i < n_rules; i++)
        trace_keep_pattern(rules[i].pattern);
    for (size_t i = 0; i < n_failure_texts; i++)
        trace_keep_pattern(failure_texts[i].pattern);
    for (size_t i = 0; i < n_messages; i++) /* what a printed row's trace agrees with */
        if (*messages[i].confirm)
            trace_keep_pattern(messages[i].confirm);
}
