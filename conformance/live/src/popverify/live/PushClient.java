package popverify.live;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.store.OffsetStore;
import org.apache.rocketmq.client.consumer.store.ReadOffsetType;
import org.apache.rocketmq.client.impl.consumer.DefaultMQPushConsumerImpl;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * popverify live mode, push: one RocketMQ DefaultMQPushConsumer (clustering, concurrently) of the
 * release under test, speaking JSON lines on stdout (one object per event, each with the wall-clock
 * time_ms of this JVM: same machine as popverify) and reading commands on stdin:
 * "drain" (succeed everything from now on), "report" (max offsets and the offset table),
 * "stop" (shutdown, which persists the offsets as DefaultMQPushConsumerImpl#shutdown does).
 *
 * Events: start, consume (one per message handed to the listener: key, topic and queue position
 * it was pulled from, reconsumeTimes, status returned), skip (test-only broken client: the status
 * was CONSUME_SUCCESS but the message was never processed), update (OffsetStore#updateOffset:
 * the in-memory offset, also carried to the broker by every pull), persist (the offsets
 * OffsetStore#persist / #persistAll send to the broker), max (maxOffset per queue), stopped.
 *
 * The offset store is observed through a java.lang.reflect.Proxy around the consumer's own
 * RemoteBrokerOffsetStore (field DefaultMQPushConsumerImpl#offsetStore), so nothing of the
 * client's behaviour is replaced. Arguments: namesrv group topic instance seed laterPercent skip.
 */
public final class PushClient {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static volatile boolean draining = false;
    private static final int START_ATTEMPTS = 10;

    private PushClient() {
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    /** One event line; values are String, Number or Boolean (null values are left out). */
    static void emit(String type, String f, Object... kv) {
        StringBuilder b = new StringBuilder("{\"time_ms\":").append(System.currentTimeMillis());
        b.append(",\"type\":").append(quote(type)).append(",\"f\":").append(quote(f));
        for (int i = 0; i + 1 < kv.length; i += 2) {
            Object v = kv[i + 1];
            if (v == null) {
                continue;
            }
            b.append(',').append(quote(String.valueOf(kv[i]))).append(':');
            b.append(v instanceof String ? quote((String) v) : String.valueOf(v));
        }
        synchronized (OUT) {
            OUT.println(b.append('}'));
        }
    }

    private static void emitOffset(String f, MessageQueue mq, long offset) {
        emit("info", f, "topic", mq.getTopic(), "queue", mq.getQueueId(), "offset", offset);
    }

    /** Wraps the consumer's offset store: every call is delegated unchanged, updates and persists are reported. */
    private static void observeOffsetStore(DefaultMQPushConsumer consumer) throws ReflectiveOperationException {
        DefaultMQPushConsumerImpl impl = consumer.getDefaultMQPushConsumerImpl();
        Field field = DefaultMQPushConsumerImpl.class.getDeclaredField("offsetStore");
        field.setAccessible(true);
        OffsetStore real = (OffsetStore) field.get(impl);
        InvocationHandler handler = (proxy, method, args) -> {
            String name = method.getName();
            if (name.equals("persistAll") && args[0] != null) {
                // RemoteBrokerOffsetStore#persistAll sends the in-memory offset of each queue it holds.
                for (Object o : (Collection<?>) args[0]) {
                    MessageQueue mq = (MessageQueue) o;
                    long offset = real.readOffset(mq, ReadOffsetType.READ_FROM_MEMORY);
                    if (offset >= 0) {
                        emitOffset("persist", mq, offset);
                    }
                }
            } else if (name.equals("persist")) {
                MessageQueue mq = (MessageQueue) args[0];
                long offset = real.readOffset(mq, ReadOffsetType.READ_FROM_MEMORY);
                if (offset >= 0) {
                    emitOffset("persist", mq, offset);
                }
            }
            Object result;
            try {
                result = method.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (name.equals("updateOffset")) {
                emit("info", "update", "topic", ((MessageQueue) args[0]).getTopic(),
                    "queue", ((MessageQueue) args[0]).getQueueId(), "offset", args[1], "increase_only", args[2]);
            }
            return result;
        };
        Object proxy = Proxy.newProxyInstance(OffsetStore.class.getClassLoader(), new Class<?>[] {OffsetStore.class},
            handler);
        field.set(impl, proxy);
    }

    /** A configured, not yet started consumer (a new one per start attempt: a failed start leaves START_FAILED). */
    private static DefaultMQPushConsumer build(String namesrv, String group, String topic, String instance,
        Random random, int laterPercent, int[] skip) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setInstanceName(instance);
        // messageModel: CLUSTERING, the default.
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeThreadMin(2);
        consumer.setConsumeThreadMax(2);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, context) -> {
            // consumeMessageBatchMaxSize is 1: one message per call; a batch is answered as a whole.
            ConsumeConcurrentlyStatus status;
            boolean skipped = false;
            synchronized (random) {
                if (skip[0] > 0) {
                    skip[0]--;
                    skipped = true;
                }
                boolean later = !draining && random.nextInt(100) < laterPercent;
                status = later ? ConsumeConcurrentlyStatus.RECONSUME_LATER : ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            }
            if (skipped) {
                status = ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            }
            for (MessageExt m : msgs) {
                // A message pulled from %RETRY%group has its topic reset to the original one
                // (ConsumeMessageConcurrentlyService#resetRetryAndNamespace); RETRY_TOPIC says so.
                boolean retry = m.getProperty("RETRY_TOPIC") != null;
                String from = retry ? "%RETRY%" + group : m.getTopic();
                emit("info", skipped ? "skip" : "consume", "key", m.getKeys(), "topic", from, "queue", m.getQueueId(),
                    "offset", m.getQueueOffset(), "reconsume", m.getReconsumeTimes(), "status", status.name(),
                    "msg_id", m.getMsgId());
            }
            return status;
        });
        return consumer;
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String group = args[1];
        String topic = args[2];
        String instance = args[3];
        Random random = new Random(Long.parseLong(args[4]));
        int laterPercent = Integer.parseInt(args[5]);
        int[] skip = {Integer.parseInt(args[6])};

        DefaultMQPushConsumer consumer = null;
        for (int attempt = 1; consumer == null; attempt++) {
            DefaultMQPushConsumer candidate = build(namesrv, group, topic, instance, random, laterPercent, skip);
            try {
                candidate.start();
                consumer = candidate;
            } catch (Exception e) {
                // e.g. the NameServer's route answer timed out on a loaded machine
                // (DefaultMQPushConsumerImpl#start -> updateTopicSubscribeInfoWhenSubscriptionChanged):
                // an application would retry; so do we, a bounded number of times.
                emit("info", "start_failed", "attempt", attempt, "error", String.valueOf(e));
                candidate.shutdown();
                if (attempt >= START_ATTEMPTS) {
                    throw e;
                }
                Thread.sleep(2000);
            }
        }
        observeOffsetStore(consumer);
        emit("info", "start", "instance", instance);

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            line = line.trim();
            if (line.equals("drain")) {
                draining = true;
                emit("info", "draining");
            } else if (line.equals("report")) {
                List<MessageQueue> queues = new ArrayList<>(consumer.fetchSubscribeMessageQueues(topic));
                for (MessageQueue mq : queues) {
                    emitOffset("max", mq, consumer.maxOffset(mq));
                }
                Map<MessageQueue, Long> table = new TreeMap<>(
                    consumer.getDefaultMQPushConsumerImpl().getOffsetStore().cloneOffsetTable(topic));
                for (Map.Entry<MessageQueue, Long> e : table.entrySet()) {
                    emitOffset("held", e.getKey(), e.getValue());
                }
                emit("info", "reported");
            } else if (line.equals("stop")) {
                break;
            }
        }
        consumer.shutdown();
        emit("info", "stopped");
        System.exit(0);
    }
}
