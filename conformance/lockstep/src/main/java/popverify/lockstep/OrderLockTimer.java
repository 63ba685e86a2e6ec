package popverify.lockstep;

import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * 5.5.0's QueueLevelConsumerOrderInfoLockManager schedules, per orderly queue, a task at the
 * queue's lock-free time on a HashedWheelTimer (a thread on the wall clock) that notifies long
 * polling (notifyLockIsFree → PopMessageProcessor#notifyLongPollingRequestIfNeed). In the harness
 * that timer is replaced, when the broker is built (before its order info is loaded), by this
 * one: it runs none of its timeouts, so no wall-clock thread wakes a parked POP between
 * two requests. The model keeps the lock-free times and fires none either
 * (reference/broker/consumer_order_info.py; spec/coverage.md "Out of scope").
 */
final class OrderLockTimer implements Timer {
    /** Swaps the lock manager's timer of 5.5.0's order info manager; 5.0.0 has none. */
    static void install(Object controller) throws Exception {
        Object manager = Reflect.get(controller, "consumerOrderInfoManager");
        Object lockManager;
        try {
            lockManager = Reflect.get(manager, "queueLevelConsumerOrderInfoLockManager");
        } catch (NoSuchFieldException e) {
            return;  // 5.0.0's ConsumerOrderInfoManager: no lock manager
        }
        Timer old = (Timer) Reflect.get(lockManager, "timer");
        Reflect.setFinal(lockManager, Reflect.field(lockManager.getClass(), "timer"), new OrderLockTimer());
        old.stop();  // never started: it starts on its first timeout
    }

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        return new Kept(this, task);
    }

    @Override
    public Set<Timeout> stop() {
        return Collections.emptySet();
    }

    /** A kept timeout: never expires; cancel() only marks it. */
    private static final class Kept implements Timeout {
        private final Timer timer;
        private final TimerTask task;
        private volatile boolean cancelled;

        Kept(Timer timer, TimerTask task) {
            this.timer = timer;
            this.task = task;
        }

        @Override
        public Timer timer() {
            return timer;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return false;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean cancel() {
            cancelled = true;
            return true;
        }
    }
}
