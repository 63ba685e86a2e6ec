package popverify.live;

// The F2 scenario over RocketMQ's remoting protocol, straight to the broker (the gRPC proxy
// refuses an expired receipt handle before the broker sees it). @PKG@ is replaced at build
// time: org.apache.rocketmq.common.protocol (5.0.x) or org.apache.rocketmq.remoting.protocol
// (5.1 and later), where RequestCode, ResponseCode and the request headers live.
//
// Args: brokerAddr namesrvAddr topic group waitSeconds watchSeconds key
// Prints one JSON object per operation on stdout (type, f, time_ms, key, handle, queue, offset,
// value, error); handle is in the proxy's receipt-handle layout (ReceiptHandle#encode) so the
// Python side parses both the same way.

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import @PKG@.RequestCode;
import @PKG@.ResponseCode;
import @PKG@.header.AckMessageRequestHeader;
import @PKG@.header.ChangeInvisibleTimeRequestHeader;
import @PKG@.header.ChangeInvisibleTimeResponseHeader;
import @PKG@.header.ExtraInfoUtil;
import @PKG@.header.PopMessageRequestHeader;
import @PKG@.header.PopMessageResponseHeader;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

public final class F2Remoting {
    private static String broker;
    private static String topic;
    private static String group;
    private static NettyRemotingClient client;
    private static String KEY;
    private static final String BROKER_NAME = "broker-a";  // popverify.live.cluster.BROKER_NAME

    private static String q(String s) {
        return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static void emit(String type, String f, String key, String handle, Integer queue, Long offset,
                             String value, String error) {
        StringBuilder b = new StringBuilder("{\"type\":").append(q(type)).append(",\"f\":").append(q(f))
            .append(",\"time_ms\":").append(System.currentTimeMillis());
        if (key != null) b.append(",\"key\":").append(q(key));
        if (handle != null) b.append(",\"handle\":").append(q(handle));
        if (queue != null) b.append(",\"queue\":").append(queue);
        if (offset != null) b.append(",\"offset\":").append(offset);
        if (value != null) b.append(",\"value\":").append(q(value));
        if (error != null) b.append(",\"error\":").append(q(error));
        System.out.println(b.append('}'));
        System.out.flush();
    }

    /** extraInfo (ExtraInfoUtil) plus queue offset, in the proxy receipt-handle layout. */
    private static String handle(String extraInfo, long offset) {
        String[] e = ExtraInfoUtil.split(extraInfo);
        return ExtraInfoUtil.getCkQueueOffset(e) + " " + ExtraInfoUtil.getPopTime(e) + " "
            + ExtraInfoUtil.getInvisibleTime(e) + " " + ExtraInfoUtil.getReviveQid(e) + " " + e[4] + " "
            + ExtraInfoUtil.getBrokerName(e) + " " + ExtraInfoUtil.getQueueId(e) + " " + offset + " 0";
    }

    private static List<MessageExt> pop(long invisibleMs) throws Exception {
        PopMessageRequestHeader h = new PopMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(topic);
        h.setQueueId(-1);
        h.setMaxMsgNums(8);
        h.setInvisibleTime(invisibleMs);
        h.setPollTime(2000);
        h.setBornTime(System.currentTimeMillis());
        h.setInitMode(0); // ConsumeInitMode.MIN: a new group starts at the queue's beginning
        emit("invoke", "receive", null, null, null, null, null, null);
        RemotingCommand resp = client.invokeSync(broker, RemotingCommand.createRequestCommand(RequestCode.POP_MESSAGE, h),
            6000);
        if (resp.getCode() != ResponseCode.SUCCESS) {
            emit("ok", "receive", null, null, null, null, "0", null);
            return List.of();
        }
        List<MessageExt> msgs = MessageDecoder.decodesBatch(ByteBuffer.wrap(resp.getBody()), true, false, true);
        emit("ok", "receive", null, null, null, null, String.valueOf(msgs.size()), null);
        // The handle (extraInfo) as the client builds it from the response header
        // (MQClientAPIImpl#processPopResponse): the CK's start offset of the message's queue,
        // popTime, invisibleTime, reviveQid, topic, broker, queue id, queue offset.
        PopMessageResponseHeader rh = (PopMessageResponseHeader)
            resp.decodeCommandCustomHeader(PopMessageResponseHeader.class);
        Map<String, Long> starts = ExtraInfoUtil.parseStartOffsetInfo(rh.getStartOffsetInfo());
        for (MessageExt m : msgs) {
            if (m.getProperty("POP_CK") != null) {
                continue;  // a retry message: the broker built its handle (PopMessageProcessor#popMsgFromQueue)
            }
            Long start = starts.get(ExtraInfoUtil.getStartOffsetInfoMapKey(m.getTopic(), m.getQueueId()));
            MessageAccessor.putProperty(m, "POP_CK", ExtraInfoUtil.buildExtraInfo(start == null ? m.getQueueOffset() : start,
                rh.getPopTime(), rh.getInvisibleTime(), rh.getReviveQid(), m.getTopic(), BROKER_NAME, m.getQueueId(),
                m.getQueueOffset()));
        }
        for (MessageExt m : msgs) {
            emit("info", "deliver", m.getKeys(), handle(m.getProperty("POP_CK"), m.getQueueOffset()), m.getQueueId(),
                m.getQueueOffset(), m.getTopic(), null);
        }
        return msgs;
    }

    private static boolean ack(String key, String extraInfo, long offset) throws Exception {
        String[] e = ExtraInfoUtil.split(extraInfo);
        AckMessageRequestHeader h = new AckMessageRequestHeader();
        h.setConsumerGroup(group);
        h.setTopic(ExtraInfoUtil.getRealTopic(e, topic, group));
        h.setQueueId(ExtraInfoUtil.getQueueId(e));
        h.setExtraInfo(extraInfo);
        h.setOffset(offset);
        emit("invoke", "ack", key, handle(extraInfo, offset), null, null, null, null);
        RemotingCommand resp = client.invokeSync(broker, RemotingCommand.createRequestCommand(RequestCode.ACK_MESSAGE, h),
            3000);
        boolean ok = resp.getCode() == ResponseCode.SUCCESS;
        emit(ok ? "ok" : "fail", "ack", key, handle(extraInfo, offset), null, null, null,
            ok ? null : resp.getCode() + " " + resp.getRemark());
        return ok;
    }

    public static void main(String[] args) throws Exception {
        broker = args[0];
        topic = args[2];
        KEY = args[6];
        group = args[3];
        long waitMs = Long.parseLong(args[4]) * 1000;
        long watchMs = Long.parseLong(args[5]) * 1000;
        client = new NettyRemotingClient(new NettyClientConfig());
        client.start();
        DefaultMQProducer producer = new DefaultMQProducer("popverify-f2-producer");
        producer.setNamesrvAddr(args[1]);
        producer.start();
        try {
            Message msg = new Message(topic, "f2".getBytes());
            msg.setKeys(KEY);
            emit("invoke", "send", KEY, null, null, null, null, null);
            SendResult sent = producer.send(msg);
            emit("ok", "send", KEY, null, sent.getMessageQueue().getQueueId(), sent.getQueueOffset(), null, null);
            MessageExt held = null;
            for (int i = 0; i < 20 && held == null; i++) {
                for (MessageExt m : pop(10_000)) {
                    if (KEY.equals(m.getKeys())) {
                        held = m;
                    } else {
                        ack(m.getKeys(), m.getProperty("POP_CK"), m.getQueueOffset());  // another scenario's message
                    }
                }
            }
            if (held == null) {
                emit("info", "outcome", null, null, null, null, "the message was never popped", null);
                return;
            }
            String extra = held.getProperty("POP_CK");
            long offset = held.getQueueOffset();
            Thread.sleep(waitMs);
            String[] e = ExtraInfoUtil.split(extra);
            ChangeInvisibleTimeRequestHeader ch = new ChangeInvisibleTimeRequestHeader();
            ch.setConsumerGroup(group);
            ch.setTopic(ExtraInfoUtil.getRealTopic(e, topic, group));
            ch.setQueueId(ExtraInfoUtil.getQueueId(e));
            ch.setExtraInfo(extra);
            ch.setOffset(offset);
            ch.setInvisibleTime(10_000L);
            emit("invoke", "change", KEY, handle(extra, offset), null, null, "10", null);
            RemotingCommand resp = client.invokeSync(broker,
                RemotingCommand.createRequestCommand(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, ch), 3000);
            if (resp.getCode() != ResponseCode.SUCCESS) {
                emit("fail", "change", KEY, null, null, null, null, resp.getCode() + " " + resp.getRemark());
                emit("info", "outcome", null, null, null, null,
                    "the broker refused changeInvisibleTime on the expired handle: " + resp.getCode() + " "
                        + resp.getRemark(), null);
            } else {
                ChangeInvisibleTimeResponseHeader rh = (ChangeInvisibleTimeResponseHeader)
                    resp.decodeCommandCustomHeader(ChangeInvisibleTimeResponseHeader.class);
                // The new handle as the client builds it (ConsumerProcessor#changeInvisibleTime).
                String next = ExtraInfoUtil.buildExtraInfo(ExtraInfoUtil.getCkQueueOffset(e), rh.getPopTime(),
                    rh.getInvisibleTime(), rh.getReviveQid(), ExtraInfoUtil.getRealTopic(e, topic, group),
                    ExtraInfoUtil.getBrokerName(e), ExtraInfoUtil.getQueueId(e), offset);
                emit("ok", "change", KEY, handle(next, offset), null, null, "10", null);
                boolean acked = ack(KEY, next, offset);
                emit("info", "outcome", null, null, null, null,
                    "the broker accepted changeInvisibleTime on the expired, revived handle; ack of the new handle "
                        + (acked ? "succeeded" : "failed"), null);
            }
            long end = System.currentTimeMillis() + watchMs;
            while (System.currentTimeMillis() < end) {
                for (MessageExt m : pop(10_000)) {
                    ack(m.getKeys(), m.getProperty("POP_CK"), m.getQueueOffset());
                }
            }
        } finally {
            producer.shutdown();
            client.shutdown();
        }
    }
}
