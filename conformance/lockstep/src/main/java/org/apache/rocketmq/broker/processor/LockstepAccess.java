package org.apache.rocketmq.broker.processor;

/**
 * popverify's door to PopReviveService's protected round methods (same package; RocketMQ's jars
 * are not sealed). The TimeAgent routes PopReviveService#run's calls of consumeReviveMessage and
 * mergeAndRevive through here, so a loop pass (popverify.lockstep.ServiceLoops) leaves the
 * round's offsets for the harness's answer.
 */
public final class LockstepAccess {
    private static PopReviveService.ConsumeReviveObj last;

    private LockstepAccess() {
    }

    /** PopReviveService#consumeReviveMessage, remembering the round's object. */
    public static void consumeReviveMessage(PopReviveService service, PopReviveService.ConsumeReviveObj obj) {
        last = obj;
        service.consumeReviveMessage(obj);
    }

    /** PopReviveService#mergeAndRevive. */
    public static void mergeAndRevive(PopReviveService service, PopReviveService.ConsumeReviveObj obj) throws Throwable {
        service.mergeAndRevive(obj);
    }

    /** {oldOffset, newOffset, endTime} of the last round consumed since the previous call, or
     * null when the pass ran none (it skipped before consumeReviveMessage). */
    public static long[] takeRound() {
        PopReviveService.ConsumeReviveObj obj = last;
        last = null;
        return obj == null ? null : new long[] {obj.oldOffset, obj.newOffset, obj.endTime};
    }
}
