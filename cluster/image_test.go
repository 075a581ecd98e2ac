package cluster

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServersHaveDistinctNamesAndImages(t *testing.T) {
	names, images := map[string]bool{}, map[string]bool{}
	for _, s := range Servers {
		require.False(t, names[s.Name], s.Name)
		require.False(t, images[s.Image], s.Image)
		names[s.Name], images[s.Image] = true, true
	}
	require.Equal(t, DefaultImage, Servers[0].Image, "the default server is listed first")
	require.Equal(t, "redis-7.0, redis-8.0, valkey-8.1", ServerNames())
}

func TestServerImage(t *testing.T) {
	t.Setenv(ImageEnv, "")
	img, err := ServerImage("valkey-8.1")
	require.NoError(t, err)
	require.Equal(t, "deadbolt/valkey:8.1", img)
	img, err = ServerImage("")
	require.NoError(t, err)
	require.Equal(t, DefaultImage, img)
	t.Setenv(ImageEnv, "redis:7.4")
	img, err = ServerImage("")
	require.NoError(t, err)
	require.Equal(t, "redis:7.4", img, "no server named: DEADBOLT_REDIS_IMAGE's")
	img, err = ServerImage("redis-8.0")
	require.NoError(t, err)
	require.Equal(t, "deadbolt/redis:8.0", img, "a server named wins over DEADBOLT_REDIS_IMAGE")
	_, err = ServerImage("redis-6.2")
	require.EqualError(t, err, `unknown server "redis-6.2" (known: redis-7.0, redis-8.0, valkey-8.1); did you mean "redis-7.0"?`)
	_, err = ServerImage("valkey-81")
	require.EqualError(t, err, `unknown server "valkey-81" (known: redis-7.0, redis-8.0, valkey-8.1); did you mean "valkey-8.1"?`)
	_, err = ServerImage("keydb")
	require.EqualError(t, err, `unknown server "keydb" (known: redis-7.0, redis-8.0, valkey-8.1)`, "nothing close: no suggestion")
	require.Equal(t, "valkey-8.1", ServerOf("deadbolt/valkey:8.1"))
	require.Equal(t, "", ServerOf("redis:7.4"))
}

func TestImageMissingNamesTheMakeTarget(t *testing.T) {
	cause := errors.New("No such image")
	require.ErrorContains(t, imageMissing(DefaultImage, cause), "run `deadbolt image` (in a checkout: make image)")
	require.ErrorContains(t, imageMissing("deadbolt/redis:8.0", cause), "(server redis-8.0) is not built: run `deadbolt image --server redis-8.0` (in a checkout: make image SERVER=redis-8.0)")
	require.ErrorContains(t, imageMissing("redis:7.4", cause), "(from DEADBOLT_REDIS_IMAGE) is not available")
}

func TestParseServerVersion(t *testing.T) {
	// Abridged INFO server replies of the images' servers.
	redis8 := "# Server\r\nredis_version:8.0.2\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n"
	v := ParseServerVersion(redis8)
	require.Equal(t, ServerVersion{Name: "redis", Version: "8.0.2", RedisVersion: "8.0.2"}, v)
	require.Equal(t, "redis 8.0.2", v.String())

	valkey := "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.1.1\r\nvalkey_release_stage:ga\r\n"
	v = ParseServerVersion(valkey)
	require.Equal(t, ServerVersion{Name: "valkey", Version: "8.1.1", RedisVersion: "7.2.4"}, v)
	require.Equal(t, "valkey 8.1.1 (redis_version 7.2.4)", v.String())

	require.Equal(t, "", ParseServerVersion("").String())
}
