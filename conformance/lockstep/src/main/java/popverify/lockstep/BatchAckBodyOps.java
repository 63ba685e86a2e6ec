package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import java.util.ArrayList;
import java.util.TreeMap;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * The `batchAckBody` op: a BATCH_ACK_MESSAGE whose body a client never sends (the request
 * domain's batch_ack_request, popverify/sim/request_domain.py): {@code body} "none" (no body:
 * AckMessageProcessor#processRequest leaves reqBody null, 5.5.0:176), "noAcks" (a
 * BatchAckMessageRequestBody without its acks list) or "emptyAcks" (an empty list); each is
 * answered by the test at 5.5.0:179. Answers {code, remark}. 5.0.0 has no such request.
 */
final class BatchAckBodyOps {
    private static final int BATCH_ACK_MESSAGE = 200151;

    private BatchAckBodyOps() {
    }

    static JSONObject send(Lockstep.Broker b, JSONObject req) throws Exception {
        if (b.version.startsWith("5.0.")) {
            throw new UnsupportedOperationException("RocketMQ " + b.version + " has no BATCH_ACK_MESSAGE");
        }
        String kind = Lockstep.required(req, "body");
        RemotingCommand request = b.request(BATCH_ACK_MESSAGE, new TreeMap<>());
        if (!kind.equals("none")) {
            // the 5.1+ body class, by reflection: it does not exist in 5.0.0
            Class<?> bodyClass = Class.forName("org.apache.rocketmq.remoting.protocol.body.BatchAckMessageRequestBody");
            Object body = bodyClass.getConstructor().newInstance();
            bodyClass.getMethod("setBrokerName", String.class).invoke(body, b.controller.getBrokerConfig().getBrokerName());
            if (kind.equals("emptyAcks")) {
                bodyClass.getMethod("setAcks", java.util.List.class).invoke(body, new ArrayList<>());
            } else if (!kind.equals("noAcks")) {
                throw new IllegalArgumentException("body must be in none, noAcks, emptyAcks");
            }
            request.setBody((byte[]) bodyClass.getMethod("encode").invoke(body));
        }
        RemotingCommand response = b.call(b.controller.getAckMessageProcessor(), request);
        JSONObject o = new JSONObject(true);
        o.put("code", response == null ? null : response.getCode());
        o.put("remark", response == null ? null : response.getRemark());
        return o;
    }
}
