package popverify.lockstep;

/**
 * Interleaving points inside one POP request. The TimeAgent makes PopMessageProcessor call
 * {@link #popTime()} where it reads the clock for popTime and {@link #beforeRead()} right before
 * each MessageStore#getMessage / getMessageAsync; the harness installs a listener for the
 * duration of one `pop` request.
 */
public final class Hooks {
    /** What runs at an interleaving point; {@code at} is 0 for popTime, k for the k-th read. */
    public interface Listener {
        void at(int point);
    }

    private static volatile Listener listener;
    private static int reads;

    private Hooks() {
    }

    public static void install(Listener l) {
        reads = 0;
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

    /** Inserted before each store read of PopMessageProcessor (arguments already evaluated). */
    public static void beforeRead() {
        Listener l = listener;
        if (l != null) {
            reads++;
            l.at(reads);
        }
    }
}
