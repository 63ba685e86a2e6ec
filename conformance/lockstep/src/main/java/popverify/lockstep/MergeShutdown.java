package popverify.lockstep;

import com.alibaba.fastjson.JSONObject;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.processor.PopBufferMergeService;

/**
 * The `mergeShutdown` op (the model's `graceful_restart`, Broker#graceful_restart): the merge
 * thread's end at a graceful shutdown. BrokerController#shutdownBasicService stops it first
 * (5.5.0:1567-1568, 5.0.0:1244): ServiceThread#shutdown sets {@code stopped} and joins the
 * thread, whose run() leaves its loop and runs its tail -- serving off, Thread.sleep(2000)
 * (VirtualClock#sleep here: no time passes), then scan() until the buffer and the
 * commit-offset queues are empty (PopBufferMergeService#run, 5.5.0:121-133, 5.0.0:116-126).
 * Here: one run() whose first isStopped() answers true (ServiceLoops#stop), then the store
 * settled as after every scan. The replay sends it only when the model's drain ended.
 */
final class MergeShutdown {
    private MergeShutdown() {
    }

    /** Runs the merge service's run() tail, then {@code settle}; answers its serving flag. */
    static JSONObject run(BrokerController controller, ScanStall.Scan settle) throws Throwable {
        PopBufferMergeService mergeService = controller.getPopMessageProcessor().getPopBufferMergeService();
        ServiceLoops.stop(mergeService);
        settle.run();
        JSONObject o = new JSONObject(true);
        o.put("serving", Reflect.get(mergeService, "serving"));
        return o;
    }
}
