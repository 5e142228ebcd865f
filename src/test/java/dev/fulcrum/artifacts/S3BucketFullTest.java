package dev.fulcrum.artifacts;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * A bucket that answers it has no room is a full storage (the upload is refused with a 507, the log naming the bucket):
 * S3-compatible servers say so with a 507 (MinIO's {@code XMinioStorageFull} among them); other failures of the bucket
 * stay the server's.
 */
class S3BucketFullTest {

    private static S3Exception answer(int status, String code) {
        return (S3Exception) S3Exception.builder().statusCode(status)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(code).build()).build();
    }

    @Test
    void aBucketWithoutRoomIsAFullStorage() {
        assertTrue(S3BlobStore.bucketFull(answer(507, "XMinioStorageFull")));
        assertTrue(S3BlobStore.bucketFull(answer(507, "InsufficientStorage")));
        assertTrue(S3BlobStore.bucketFull(answer(503, "XMinioStorageFull")));
        assertFalse(S3BlobStore.bucketFull(answer(503, "SlowDown")));
        assertFalse(S3BlobStore.bucketFull(answer(403, "AccessDenied")));
        assertFalse(S3BlobStore.bucketFull(SdkClientException.create("connection refused")));
    }
}
