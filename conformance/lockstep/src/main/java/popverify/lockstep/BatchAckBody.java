package popverify.lockstep;

import com.alibaba.fastjson.JSONArray;

/** BATCH_ACK_MESSAGE's body (5.1+): not built yet. */
final class BatchAckBody {
    private BatchAckBody() {
    }

    static byte[] encode(String group, JSONArray entries, String brokerName) {
        throw new UnsupportedOperationException("batchAck is not implemented by the harness yet");
    }
}
