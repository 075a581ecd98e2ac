package cluster

import (
	"context"
	"fmt"
	"os"
)

// DefaultImage is built FROM scratch by `make image` out of Debian's Redis packages.
const DefaultImage = "deadbolt/redis:7.0"

// ImageEnv selects another image, for example an official Redis image on a
// machine that can pull one.
const ImageEnv = "DEADBOLT_REDIS_IMAGE"

// Image is the Redis image this run uses.
func Image() string {
	if img := os.Getenv(ImageEnv); img != "" {
		return img
	}
	return DefaultImage
}

// checkImage fails early, with the fix, when the image is not on the engine:
// nothing can be pulled here, so a missing image would otherwise surface as a
// registry error deep inside testcontainers.
func (d *docker) checkImage(ctx context.Context, image string) error {
	if _, err := d.cli.ImageInspect(ctx, image); err != nil {
		if image == DefaultImage {
			return fmt.Errorf("image %s is not built: run `make image` (%v)", image, err)
		}
		return fmt.Errorf("image %s (from %s) is not available: %v", image, ImageEnv, err)
	}
	return nil
}
