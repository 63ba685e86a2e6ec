package popverify.lockstep;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * BrokerController's pullMessageExecutor in the harness: a long-polling POP woken by a message's
 * arrival (PopMessageProcessor / PopLongPollingService#wakeUp submit the re-run of the request
 * here) is queued and run by the harness right after the request during which it was woken, on
 * the harness thread: one deterministic order instead of a thread pool's.
 */
final class QueuedExecutor extends AbstractExecutorService {
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

    @Override
    public synchronized void execute(Runnable command) {
        tasks.add(command);
    }

    synchronized Runnable next() {
        return tasks.poll();
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
