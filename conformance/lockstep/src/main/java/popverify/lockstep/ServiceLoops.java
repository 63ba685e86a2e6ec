package popverify.lockstep;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.broker.processor.AckMessageProcessor;
import org.apache.rocketmq.broker.processor.PopReviveService;

/**
 * One pass of a service thread's own loop body, run on the harness thread at a virtual time:
 * PopBufferMergeService#run (scan, scanGarbage every countOfSecond30 passes, the `serving`
 * switch) and PopReviveService#run (the start-time and role checks, consumeReviveMessage,
 * mergeAndRevive, the idle back-off). The TimeAgent rewrites, inside those two run() methods
 * only, {@code this.isStopped()} into {@link #isStopped}, {@code this.waitForRunning(ms)} into
 * {@link #waitForRunning} (no wait: the virtual time passes in `advance`) and the catch block's
 * {@code POP_LOGGER.error(..., e)} into {@link #error} (the pass's exception is kept and
 * rethrown to the request, as a direct call of the round's methods would throw it).
 *
 * <p>{@link #pass} lets the loop condition answer "not stopped" once (n times), then ends the
 * loop with {@link End} at its next test, outside the loop's try: exactly one (n) iteration(s)
 * run, and the shutdown tail after the loop does not. {@link #stopRevive} runs the revive
 * loop's exit at a broker shutdown (isStopped true at once). The long-polling service's loop
 * (PopLongPollingService#run, 5.0.0's inner class) tests its {@code stopped} field instead of
 * isStopped(): {@link #stopped}.
 */
public final class ServiceLoops {
    /** Thrown by the loop's second {@code isStopped()} test: the pass is over. */
    static final class End extends Error {
        End() {
            super("one service loop pass", null, false, false);
        }
    }

    private static Object passing;
    private static Object stopping;
    private static int tests;
    private static int passes;
    private static Throwable error;

    private ServiceLoops() {
    }

    /** One iteration of {@code service}'s run() loop; rethrows the exception the loop caught. */
    static void pass(Runnable service) throws Throwable {
        pass(service, 1);
    }

    /** {@code n} iterations of {@code service}'s run() loop at the same virtual time. */
    static void pass(Runnable service, int n) throws Throwable {
        passing = service;
        passes = n;
        tests = 0;
        error = null;
        try {
            service.run();
            throw new IllegalStateException("the loop of " + service.getClass().getSimpleName() + " ended by itself");
        } catch (End end) {
            // the second loop test: one pass done
        } finally {
            passing = null;
        }
        Throwable t = error;
        error = null;
        if (t != null) {
            throw t;
        }
    }

    /**
     * When PopBufferMergeService's pass counter triggers its timed work, on the virtual clock.
     * Java counts passes (one every `interval` = 5 ms): scanGarbage when scanTimes is a multiple
     * of countOfSecond30 (30 s of passes), counter.set(buffer.size()) and scanTimes = 0 at
     * countOfMinute1 (60 s). The harness runs a pass per `advance` slice, not per 5 ms, so it
     * reads the counts as time, as the model does (reference/broker/buffer_merge.py,
     * GARBAGE_SCAN_PERIOD_MS / COUNTER_RESET_PERIOD_MS): the first pass 30 s after the service
     * started or after the last garbage scan runs scanGarbage. The counter reset is not
     * observable (it only bounds addCk at popCkMaxBufferSize); it is let happen when both are due.
     */
    static final class MergeSchedule {
        static final long GARBAGE_MS = 30_000;
        static final long RESET_MS = 60_000;
        private long nextGarbage;
        private long nextReset;

        MergeSchedule(long start) {
            nextGarbage = start + GARBAGE_MS;
            nextReset = start + RESET_MS;
        }

        /** The scanTimes to set before a pass at ``now``, so that the pass's scanTimes++ lands
         * on scanGarbage exactly when it is due (and on the reset only with it). */
        int scanTimesBefore(long now, int countOfSecond30, int countOfMinute1) {
            boolean garbage = now >= nextGarbage;
            boolean reset = now >= nextReset;
            if (reset) {
                nextReset = now + RESET_MS;
            }
            if (!garbage) {
                return 0;
            }
            nextGarbage = now + GARBAGE_MS;
            return (reset ? countOfMinute1 : countOfSecond30) - 1;
        }
    }

    /**
     * BrokerController#startBasicService's AckMessageProcessor#startPopReviveService (5.5.0:1885-1888,
     * popConsumerFSServiceInit on by default; 5.0.0 #start:1461-1463), without threads: each
     * service's {@code started} set first makes ServiceThread#start return at once (the passes
     * run the loop on the harness thread), cleared again so that #shutdown / #stop return at once
     * too (as the timer's flush service, Lockstep's Broker#create).
     */
    static void startRevive(AckMessageProcessor processor, PopReviveService[] services) throws Exception {
        for (PopReviveService s : services) {
            ((AtomicBoolean) Reflect.get(s, "started")).set(true);
        }
        processor.startPopReviveService();
        for (PopReviveService s : services) {
            ((AtomicBoolean) Reflect.get(s, "started")).set(false);
        }
    }

    /**
     * The revive threads' end at BrokerController#shutdown: ServiceThread#shutdown (5.0.0 #stop)
     * sets {@code stopped} and wakes the thread, whose loop test then ends run() (PopReviveService
     * #run, 5.5.0:660, 5.0.0:424). Here: one run() whose first isStopped() answers true.
     */
    static void stopRevive(PopReviveService[] services) {
        for (PopReviveService s : services) {
            stop(s);
        }
    }

    /** {@code service}'s run() as its stopped thread runs it: the loop test answers true at
     * once, and what follows the loop runs (the revive's exit; the merge service's tail). */
    static void stop(Runnable service) {
        stopping = service;
        try {
            service.run();
        } finally {
            stopping = null;
        }
    }

    /** Replaces {@code isStopped()} in the loops: false for the pass's first test, then {@link End}. */
    public static boolean isStopped(Object service) throws Exception {
        if (service == stopping) {
            return true;  // stop: the stopped thread's loop test
        }
        if (service != passing) {
            // not under a pass (the harness never starts these threads): the real flag
            return (Boolean) service.getClass().getMethod("isStopped").invoke(service);
        }
        if (++tests > passes) {
            throw new End();
        }
        return false;
    }

    /** Replaces the long-polling loop's {@code this.stopped} read: as {@link #isStopped}. */
    public static boolean stopped(Object service) throws Exception {
        if (service != passing) {
            return (Boolean) Reflect.get(service, "stopped");
        }
        return isStopped(service);
    }

    /** Replaces {@code waitForRunning(ms)} in the loops: no wait on the virtual clock. */
    public static void waitForRunning(Object service, long ms) {
    }

    /** Replaces the loops' {@code POP_LOGGER.error(msg, e)} (5.0.0 both, 5.5.0 merge). */
    public static void error(Object logger, String msg, Throwable e) {
        error = e;
    }

    /** Replaces 5.5.0 PopReviveService's {@code POP_LOGGER.error(msg, queueId, e)}. */
    public static void error(Object logger, String msg, Object arg, Object e) {
        error = e instanceof Throwable ? (Throwable) e : new IllegalStateException(msg + " " + arg + " " + e);
    }
}
