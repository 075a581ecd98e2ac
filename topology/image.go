package topology

import "os"

// DefaultImage is the Redis image a Spec runs when it names none and
// ImageEnv is unset: built FROM scratch by `make image` out of Debian's
// Redis packages (cluster.Servers lists the other servers' images).
const DefaultImage = "deadbolt/redis:7.0"

// ImageEnv selects another image, for example an official Redis image on a
// machine that can pull one.
const ImageEnv = "DEADBOLT_REDIS_IMAGE"

// Image is the Redis image a run uses when no server is named.
func Image() string {
	if img := os.Getenv(ImageEnv); img != "" {
		return img
	}
	return DefaultImage
}
