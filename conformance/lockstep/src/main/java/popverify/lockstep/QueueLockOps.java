package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import java.util.Map;
import org.apache.rocketmq.broker.processor.PopMessageProcessor;

/**
 * The `cleanQueueLocks` op (spec/conformance.md "QueueLockManager's clean-up"): one pass of
 * PopMessageProcessor$QueueLockManager#run, the broker's 60 s task that drops every lock entry
 * whose last lock time is older than 60 s (cleanUnusedLock(60000), held ones included), at the
 * virtual time the replay sends it (every 60 s of virtual time since the broker started).
 *
 * <p>The service thread is never started by the harness. Its loop runs here on a thread of its
 * own for exactly one pass: wakeup() makes the first waitForRunning(60000) return at once, the
 * pass cleans, and once the thread waits again it is stopped (the stopped flag, then wakeup);
 * the wait it leaves runs the clean-up a second time at the same virtual time, which removes
 * nothing more. No wall-clock wait decides anything.
 */
public final class QueueLockOps {
    /** How long the pass may take on a loaded machine before the op fails. */
    private static final long PASS_TIMEOUT_MS = 10_000;

    private QueueLockOps() {
    }

    /** `cleanQueueLocks` {}: answers {entries}: the lock entries left (the log line's count). */
    static JSONObject clean(Lockstep.Broker b) throws Exception {
        PopMessageProcessor.QueueLockManager locks = b.controller.getPopMessageProcessor().getQueueLockManager();
        locks.wakeup();
        Thread pass = new Thread(locks::run, "popverify-queue-lock-pass");
        pass.setDaemon(true);
        pass.start();
        long deadline = System.nanoTime() + PASS_TIMEOUT_MS * 1_000_000L;
        // the pass is over when the loop waits again (or has ended)
        while (pass.getState() != Thread.State.TIMED_WAITING && pass.isAlive()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("QueueLockManager#run did not finish its pass");
            }
            Thread.sleep(1);
        }
        Reflect.set(locks, "stopped", true);  // makeStop() needs a started service
        locks.wakeup();
        pass.join(PASS_TIMEOUT_MS);
        Reflect.set(locks, "stopped", false);
        if (pass.isAlive()) {
            throw new IllegalStateException("QueueLockManager#run did not stop");
        }
        JSONObject o = new JSONObject(true);
        o.put("entries", ((Map<?, ?>) Reflect.get(locks, "expiredLocalCache")).size());
        return o;
    }
}
