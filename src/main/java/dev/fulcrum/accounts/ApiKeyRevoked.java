package dev.fulcrum.accounts;

/**
 * Fired in the transaction that revokes a key, so that caches of checked keys can forget it once the revocation is
 * committed ({@code @Observes(during = TransactionPhase.AFTER_SUCCESS)}).
 */
public record ApiKeyRevoked(String keyHash) {
}
