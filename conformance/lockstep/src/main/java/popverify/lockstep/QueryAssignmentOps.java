package popverify.lockstep;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * QUERY_ASSIGNMENT through the broker's own QueryAssignmentProcessor (queryAssignment, then
 * doLoadBalance): the server-side rebalance of one client of a group, over the consumers the
 * harness registered with HEART_BEAT (PullOps) and the topic's queues.
 *
 * The broker learns a topic's queues from the name server (TopicRouteInfoManager#getTopicSubscribeInfo);
 * the harness has none, so the route a one-broker cluster's name server gives -- readQueueNums
 * queues of the local TopicConfig on this broker (MQClientInstance#topicRouteData2TopicSubscribeInfo)
 * -- is put in the manager's topicSubscribeInfoTable before each query. A topic this broker has
 * no config for has no route (the table has no entry for it).
 * With "popShareQueueNum", the query is made with the group in POP mode (allocate4Pop); with
 * "messageModel", in that model (BROADCASTING).
 */
final class QueryAssignmentOps {
    private static final int QUERY_ASSIGNMENT = 400;  // RequestCode.QUERY_ASSIGNMENT
    private static final int SET_MESSAGE_REQUEST_MODE = 401;  // RequestCode.SET_MESSAGE_REQUEST_MODE

    private QueryAssignmentOps() {
    }

    /** The one-line dispatch target of Lockstep.Broker#simple (op "queryAssignment"). */
    @SuppressWarnings("unchecked")
    static JSONObject query(Lockstep.Broker broker, JSONObject req) throws Exception {
        String topic = Lockstep.required(req, "topic");
        JSONObject out = new JSONObject(true);
        TopicConfig tc = broker.controller.getTopicConfigManager().selectTopicConfig(topic);
        Object manager = broker.controller.getTopicRouteInfoManager();
        Map<String, Set<MessageQueue>> table =
            (Map<String, Set<MessageQueue>>) Reflect.get(manager, "topicSubscribeInfoTable");
        if (tc == null) {
            // no route: the name server of a one-broker cluster knows no topic its broker has no
            // config for; getTopicSubscribeInfo asks it (the harness has none: the lookup fails
            // and is logged, as TOPIC_NOT_EXIST is) and returns null
            table.remove(topic);
        } else {
            String brokerName = broker.controller.getBrokerConfig().getBrokerName();
            Set<MessageQueue> route = new HashSet<>();
            for (int q = 0; q < tc.getReadQueueNums(); q++) {
                route.add(new MessageQueue(topic, brokerName, q));
            }
            table.put(topic, route);
        }

        String group = Lockstep.required(req, "group");
        // the request bodies as JSON (their classes' package moved between releases)
        JSONObject body = new JSONObject(true);
        body.put("topic", topic);
        body.put("consumerGroup", group);
        body.put("clientId", Lockstep.required(req, "clientId"));
        body.put("strategyName", Lockstep.required(req, "strategy"));
        String model = req.getString("messageModel");  // a broadcasting consumer's query: BROADCASTING
        body.put("messageModel", model == null ? "CLUSTERING" : model);
        Integer share = req.getInteger("popShareQueueNum");
        if (share != null) {
            // the group in POP mode for this one query (SET_MESSAGE_REQUEST_MODE, as an admin's
            // setConsumeMode sends it), then back in PULL mode
            out.put("setMode", setMode(broker, topic, group, "POP", share));
        }
        RemotingCommand response = send(broker, QUERY_ASSIGNMENT, body);
        if (share != null) {
            out.put("resetMode", setMode(broker, topic, group, "PULL", 0));
        }
        out.put("code", response.getCode());
        JSONObject answer = response.getBody() == null ? null
            : JSON.parseObject(new String(response.getBody(), StandardCharsets.UTF_8));
        JSONArray assignments = answer == null ? null : answer.getJSONArray("messageQueueAssignments");
        if (assignments == null) {
            out.put("queues", null);  // doLoadBalance returned null: the client keeps its assignment
            return out;
        }
        JSONArray queues = new JSONArray();
        for (Object a : assignments) {
            JSONObject mq = ((JSONObject) a).getJSONObject("messageQueue");
            JSONObject q = new JSONObject(true);
            q.put("topic", mq.getString("topic"));
            q.put("brokerName", mq.getString("brokerName"));
            q.put("queueId", mq.getInteger("queueId"));
            q.put("mode", ((JSONObject) a).getString("mode"));
            queues.add(q);
        }
        out.put("queues", queues);
        return out;
    }

    /** The one-line dispatch target of op "setMessageRequestMode" {topic, group}: an admin's
     * SET_MESSAGE_REQUEST_MODE (PULL) of any topic; answers {code}. */
    static JSONObject setRequestMode(Lockstep.Broker broker, JSONObject req) throws Exception {
        JSONObject out = new JSONObject(true);
        out.put("code", setMode(broker, Lockstep.required(req, "topic"), Lockstep.required(req, "group"), "PULL", 0));
        return out;
    }

    private static int setMode(Lockstep.Broker broker, String topic, String group, String mode, int share)
        throws Exception {
        JSONObject body = new JSONObject(true);
        body.put("topic", topic);
        body.put("consumerGroup", group);
        body.put("mode", mode);
        body.put("popShareQueueNum", share);
        return send(broker, SET_MESSAGE_REQUEST_MODE, body).getCode();
    }

    private static RemotingCommand send(Lockstep.Broker broker, int code, JSONObject body) throws Exception {
        RemotingCommand request = broker.request(code, Map.of());
        request.setBody(body.toJSONString().getBytes(StandardCharsets.UTF_8));
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        return broker.controller.getQueryAssignmentProcessor().processRequest(ch.pipeline().firstContext(), request);
    }
}
