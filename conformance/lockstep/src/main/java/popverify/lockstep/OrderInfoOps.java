package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;

/**
 * The `persistOrderInfo` op: the broker's consumer order info (5.0.0
 * broker/offset/ConsumerOrderInfoManager, 5.5.0 broker/pop/orderly/QueueLevelConsumerManager)
 * written to its file as BrokerController's 10 s task does (ConfigManager#persist: encode, which
 * runs autoClean first). The harness runs no scheduled task, so the replay sends this op when
 * the model's persist ran (reference/broker/consumer_order_info.py#flush_step); a restart then
 * reloads what was written (spec/conformance.md "Orderly POP").
 */
public final class OrderInfoOps {
    private OrderInfoOps() {
    }

    /** `persistOrderInfo` {}: persist the controller's order info manager; answers {}. */
    static JSONObject persist(Object controller) throws Exception {
        // the field's type differs between releases (a class on 5.0.0, an interface on 5.5.0)
        Reflect.invoke(Reflect.get(controller, "consumerOrderInfoManager"), "persist");
        return new JSONObject();
    }
}
