package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.TimerTask;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * 5.5.0's QueueLevelConsumerOrderInfoLockManager schedules, per orderly queue, a task at the
 * queue's lock-free time on a HashedWheelTimer (a thread on the wall clock) that notifies long
 * polling (notifyLockIsFree → PopMessageProcessor#notifyLongPollingRequestIfNeed). In the harness
 * that timer is replaced, when the broker is built (before its order info is loaded), by this
 * one: it keeps each timeout with its deadline on the virtual clock and runs them only on the
 * `fireOrderLockTimers` op, so no wall-clock thread wakes a parked POP between two requests.
 * The replay sends the op with the model's long-polling step, which fires the same lock-free
 * times (reference/broker/broker.py#long_polling_step).
 */
final class OrderLockTimer implements Timer {
    private final List<Kept> pending = new ArrayList<>();

    /** `fireOrderLockTimers` {}: runs the due timeouts (deadline at or before now, earliest
     * first, ties in scheduling order); answers {fired, woken}: how many ran, and the requests
     * whose re-runs they queued (by opaque). 5.0.0: none. */
    static JSONObject fire(Lockstep.Broker b) throws Exception {
        JSONObject o = new JSONObject(true);
        JSONArray before = LongPollOps.queuedOpaques(b);
        OrderLockTimer timer = of(b.controller);
        List<Kept> due = new ArrayList<>();
        if (timer != null) {
            long now = VirtualClock.get();
            synchronized (timer.pending) {
                for (Kept k : timer.pending) {
                    if (!k.cancelled && k.deadline <= now) {
                        due.add(k);
                    }
                }
                timer.pending.removeIf(k -> k.cancelled || k.deadline <= now);
            }
            due.sort(Comparator.comparingLong(k -> k.deadline));  // stable: ties keep their order
            for (Kept k : due) {
                k.expired = true;
                k.task.run(k);
            }
        }
        JSONArray woken = LongPollOps.queuedOpaques(b);
        woken.removeAll(before);
        o.put("fired", due.size());
        o.put("woken", woken);
        return o;
    }

    private static Object lockManager(Object controller) throws Exception {
        Object manager = Reflect.get(controller, "consumerOrderInfoManager");
        try {
            return Reflect.get(manager, "queueLevelConsumerOrderInfoLockManager");
        } catch (NoSuchFieldException e) {
            return null;  // 5.0.0's ConsumerOrderInfoManager: no lock manager
        }
    }

    private static OrderLockTimer of(Object controller) throws Exception {
        Object lockManager = lockManager(controller);
        return lockManager == null ? null : (OrderLockTimer) Reflect.get(lockManager, "timer");
    }
    /** Swaps the lock manager's timer of 5.5.0's order info manager; 5.0.0 has none. */
    static void install(Object controller) throws Exception {
        Object lockManager = lockManager(controller);
        if (lockManager == null) {
            return;
        }
        Timer old = (Timer) Reflect.get(lockManager, "timer");
        Reflect.setFinal(lockManager, Reflect.field(lockManager.getClass(), "timer"), new OrderLockTimer());
        old.stop();  // never started: it starts on its first timeout
    }

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        Kept k = new Kept(this, task, VirtualClock.get() + unit.toMillis(delay));
        synchronized (pending) {
            pending.add(k);
        }
        return k;
    }

    @Override
    public Set<Timeout> stop() {
        return Collections.emptySet();
    }

    /** A kept timeout: expires when `fireOrderLockTimers` runs it; cancel() marks it. */
    private static final class Kept implements Timeout {
        private final Timer timer;
        private final TimerTask task;
        private final long deadline;  // virtual clock
        private volatile boolean cancelled;
        private volatile boolean expired;

        Kept(Timer timer, TimerTask task, long deadline) {
            this.timer = timer;
            this.task = task;
            this.deadline = deadline;
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
            return expired;
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
