/* verdict.h - the verdicts of validation (docs/validation.md, "Verdicts"), shared by the method (validate.h) and the
 * outside meter (xmeter.h). */
#ifndef IB_VERDICT_H
#define IB_VERDICT_H
#ifdef __cplusplus
extern "C" {
#endif

/* pass: the SoI presses as it says, seen from outside. FAIL: an independent meter (or its own self-meter) shows it
 * does not. BUSY: the machine took the CPU, so the figures describe the host. ISOLATED: the meter shows the
 * pressure and the neighbour's probe feels nothing: this host isolates the resource. UNCHECKED: no independent
 * meter here, and the probe felt nothing (or no probe could be placed). skipped: not run here, with why;
 * undecidable: the host took the capacity below the targets; interrupted: Ctrl-C. */
enum val_verdict {
    VAL_PASS = 0,
    VAL_FAIL,
    VAL_SKIPPED,
    VAL_UNDECIDABLE,
    VAL_INTERRUPTED,
    VAL_BUSY,
    VAL_ISOLATED,
    VAL_UNCHECKED,
};
/* "pass", "FAIL", "skipped", "undecidable", "interrupted", "BUSY", "ISOLATED", "UNCHECKED" */
const char *val_verdict_name(enum val_verdict v);

#ifdef __cplusplus
}
#endif
#endif
