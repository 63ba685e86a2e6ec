package popverify.lockstep;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * BrokerController's pullMessageExecutor in the harness: a long-polling POP woken by a message's
 * arrival (PopMessageProcessor / PopLongPollingService#wakeUp submit the re-run of the request
 * here) is queued and run by the harness right after the request during which it was woken, on
 * the harness thread: one deterministic order instead of a thread pool's. With
 * {@link LongPollOps} deferring them, they wait for a `runWoken` request instead.
 */
final class QueuedExecutor extends AbstractExecutorService {
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    @Override
    public synchronized void execute(Runnable command) {
        tasks.add(command);
    }

    /** The next task the harness runs after a request; none while LongPollOps defers them. */
    synchronized Runnable next() {
        return LongPollOps.deferred() ? null : tasks.poll();
    }

    /** The first task {@code which} accepts, taken out whatever the deferral (LongPollOps#runWoken). */
    synchronized Runnable take(Predicate<Runnable> which) {
        for (Iterator<Runnable> it = tasks.iterator(); it.hasNext(); ) {
            Runnable task = it.next();
            if (which.test(task)) {
                it.remove();
                return task;
            }
        }
        return null;
    }

    /** The queued tasks, in order (LongPollOps#queuedOpaques). */
    synchronized List<Runnable> snapshot() {
        return new ArrayList<>(tasks);
    }

    /** submit() keeps the submitted task reachable (the RequestTask names the woken request). */
    @Override
    protected <T> RunnableFuture<T> newTaskFor(Runnable runnable, T value) {
        return new Task<>(runnable, value);
    }

    /** A queued task and what was submitted. */
    static final class Task<T> extends FutureTask<T> {
        final Runnable submitted;

        Task(Runnable runnable, T value) {
            super(runnable, value);
            this.submitted = runnable;
        }
    }

    @Override
    public void shutdown() {
        // nothing runs on its own
    }

    @Override
    public List<Runnable> shutdownNow() {
        return Collections.emptyList();
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }
}
