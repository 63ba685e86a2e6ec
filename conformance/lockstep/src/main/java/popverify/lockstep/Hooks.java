package popverify.lockstep;

/**
 * Interleaving points inside one POP request. The TimeAgent makes PopMessageProcessor call
 * {@link #popTime()} where it reads the clock for popTime, {@link #beforeVisit()} on entering
 * each popMsgFromQueue (one queue of the topic or of its retry topic) and {@link #beforeUnlock()}
 * right before it releases that queue's lock (QueueLockManager#unLock: 5.0.0's finally, 5.5.0's
 * whenComplete); the harness installs a listener for the duration of one `pop` request.
 *
 * <p>Point k (k >= 1) is "after the k-th visit", the model's queue step (PopOperation#visits): the
 * visit's reads, checkpoint and offsets are done and, when it took the queue lock, the lock is
 * still held. It runs before the visit's unLock; a visit that took no lock (tryLock failed) has
 * its point at the entry of the next visit, or, for the last one, after the POP (reported as
 * missed, run there by the caller).
 */
public final class Hooks {
    /** What runs at an interleaving point; {@code at} is 0 for popTime, k after the k-th visit. */
    public interface Listener {
        void at(int point);
    }

    private static volatile Listener listener;
    private static int visits;
    /** The visit whose point has not run yet (0: none). */
    private static int open;

    private Hooks() {
    }

    public static void install(Listener l) {
        visits = 0;
        open = 0;
        listener = l;
    }

    public static void uninstall() {
        listener = null;
    }

    /** Replaces the popTime clock read: the value is taken first, then point 0 runs. */
    public static long popTime() {
        long t = VirtualClock.currentTimeMillis();
        Listener l = listener;
        if (l != null) {
            l.at(0);
        }
        return t;
    }

    /** Inserted at the entry of PopMessageProcessor#popMsgFromQueue. */
    public static void beforeVisit() {
        Listener l = listener;
        if (l != null) {
            fireOpen(l);
            visits++;
            open = visits;
        }
    }

    /** Inserted before each QueueLockManager#unLock call of PopMessageProcessor. */
    public static void beforeUnlock() {
        Listener l = listener;
        if (l != null) {
            fireOpen(l);
        }
    }

    private static void fireOpen(Listener l) {
        if (open > 0) {
            int point = open;
            open = 0;
            l.at(point);
        }
    }
}
