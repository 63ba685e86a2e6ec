package popverify.lockstep;

/**
 * The virtual wall clock RocketMQ's classes read instead of System.currentTimeMillis (the
 * TimeAgent rewrites those calls inside org.apache.rocketmq.*). Only the harness moves it.
 */
public final class VirtualClock {
    private static volatile long now = 1_700_000_000_000L;

    private VirtualClock() {
    }

    /** Replaces System.currentTimeMillis() in RocketMQ's classes. */
    public static long currentTimeMillis() {
        return now;
    }

    /** Replaces Thread.sleep(ms) in PopReviveService: virtual time is frozen inside a step, so
     * the 100 ms waits at the tail of a revive queue pass instantly (see spec/conformance.md). */
    public static void sleep(long ms) {
        // no real wait and no time passes: the revive round sees one frozen instant
    }

    public static void set(long value) {
        now = value;
    }

    public static long get() {
        return now;
    }
}
