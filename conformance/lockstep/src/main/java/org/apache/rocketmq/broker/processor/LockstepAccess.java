package org.apache.rocketmq.broker.processor;

/**
 * popverify's door to PopReviveService's protected round methods (same package; RocketMQ's jars
 * are not sealed). One call = one loop pass of PopReviveService#run without its waits.
 */
public final class LockstepAccess {
    private LockstepAccess() {
    }

    /** consumeReviveMessage then mergeAndRevive on a fresh ConsumeReviveObj; returns
     * {oldOffset, newOffset, endTime}. */
    public static long[] reviveRound(PopReviveService service) throws Throwable {
        PopReviveService.ConsumeReviveObj obj = new PopReviveService.ConsumeReviveObj();
        service.consumeReviveMessage(obj);
        service.mergeAndRevive(obj);
        return new long[] {obj.oldOffset, obj.newOffset, obj.endTime};
    }
}
