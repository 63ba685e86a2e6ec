package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;

/**
 * The `scanStall` op (the model's `scan_stall` fault; spec/conformance.md "Store put failures
 * and scan stalls"): one PopBufferMergeService#scan that takes {@code ms} of virtual time. The
 * TimeAgent turns the scan's last clock read -- {@code long eclipse = System.currentTimeMillis()
 * - startTime} (5.0.0:281, 5.5.0:336), after the scan's work and scanCommitOffset -- into
 * {@link #eclipseNow()}, which adds the armed stall once. So the work is done at the scan's
 * start and the stall is seen by the eclipse check ("scan stop, because eclipse too long":
 * {@code serving = false} past popCkStayBufferTimeOut - 1000 ms), as the model's
 * PopBufferMergeService#scan(elapsed_ms) has it; the time itself passes in the `advance` the
 * replay sends next.
 */
public final class ScanStall {
    /** pop_driver's scan_stall bound is 1000..5000 ms; the harness takes up to a minute. */
    static final long MAX_MS = 60_000;

    private static long stallMs;

    private ScanStall() {
    }

    /** What the harness's scan runs (Broker#scan: scan, scanGarbage, the serving switch). */
    interface Scan {
        void run() throws Throwable;
    }

    /** `scanStall` {ms}: one scan whose eclipse is ``ms``; answers the service's serving flag. */
    static JSONObject run(JSONObject req, Scan scan, Object mergeService) throws Throwable {
        long ms = Lockstep.boundedLong(req, "ms", -1, 1, MAX_MS);
        stallMs = ms;
        try {
            scan.run();
        } finally {
            stallMs = 0;
        }
        JSONObject o = new JSONObject(true);
        o.put("serving", Reflect.get(mergeService, "serving"));
        return o;
    }

    /** Replaces the eclipse clock read of PopBufferMergeService#scan. */
    public static long eclipseNow() {
        long t = VirtualClock.currentTimeMillis() + stallMs;
        stallMs = 0;
        return t;
    }
}
