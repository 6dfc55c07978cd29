/* junit.h - `ibench validate`'s result document as JUnit XML, the test report CI systems read (Jenkins, GitLab,
 * GitHub Actions' report actions): one test case per SoI and check, failures with their reason, skipped with why.
 * Made in memory; the command writes it. */
#ifndef IB_JUNIT_H
#define IB_JUNIT_H
#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The verdicts that count as failures only when the user asks (`--fail-on`): bits of fail_on. FAIL always fails. */
#define JUNIT_FAIL_BUSY 1u
#define JUNIT_FAIL_ISOLATED 2u
#define JUNIT_FAIL_UNCHECKED 4u
#define JUNIT_FAIL_ALL (JUNIT_FAIL_BUSY | JUNIT_FAIL_ISOLATED | JUNIT_FAIL_UNCHECKED)

/* The value of `--fail-on`: a comma-separated list of busy, isolated, unchecked (any case) or all, as a mask of the
 * bits above. 0, or -EINVAL with one line naming what is wrong. */
int junit_fail_on_parse(const char *list, unsigned *mask, char *why, size_t len);
/* Does this verdict name (val_verdict_name's, or the JSON's) fail a run under fail_on? FAIL always; BUSY, ISOLATED,
 * UNCHECKED when their bit is set; pass, skipped, undecidable, interrupted never; a name it does not know always
 * (a reader must not pass what it does not understand). The same rule junit_from_validate applies per test case. */
int junit_verdict_fails(const char *verdict, unsigned fail_on);

/* `ibench validate --json`'s document (docs/validation.md) as JUnit XML: one <testsuite name="ibench validate">
 * in <testsuites>; per element of "sois", one <testcase classname="ibench.validate.SOI" name=CHECK> per element of
 * its "checks" (the SoI's own verdict and reason, named "validate", when it has none), and one per element of
 * "overlap_checks" (classname "ibench.validate.overlap", named by its text, cut to JUNIT_NAME_MAX bytes). A verdict
 * that fails (junit_verdict_fails) -> <failure message=REASON type=VERDICT>; pass -> an empty test case; any other
 * -> <skipped message="VERDICT: REASON">. Times from "seconds" where given (the suites' from the document's, else
 * 0); the document's scalar members as properties. Valid against Jenkins' junit-10.xsd
 * (tests/fixtures/junit/junit-10.xsd). Returns 0 and *xml (malloc'ed, NUL-terminated; the caller frees it), or
 * -EINVAL with one line in why when the document is not a validate result, -ENOMEM. Never prints or exits. */
int junit_from_validate(const json_t *doc, unsigned fail_on, char **xml, char *why, size_t len);
#define JUNIT_NAME_MAX 100

#ifdef __cplusplus
}
#endif
#endif
