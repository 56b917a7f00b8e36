{
  "variables": {
    "neardup_core_sources": [
      "native/core/util/cpu.cc",
      "native/core/hash/murmur3.cc",
      "native/core/hash/murmur3_multi.cc",
      "native/core/hash/digest.cc",
      "native/core/hash/crc32c.cc",
      "native/core/text/utf8.cc",
      "native/core/text/normalize.cc",
      "native/core/text/shingle.cc",
      "native/core/text/shingle_batch.cc",
      "native/core/parallel/pool.cc",
      "native/core/io/file.cc",
      "native/core/io/header.cc",
      "native/core/minhash/mt19937.cc",
      "native/core/minhash/profiles.cc",
      "native/core/minhash/signature.cc",
      "native/core/minhash/signature_file.cc",
      "native/core/minhash/sha1_shingle.cc"
    ],
    "neardup_binding_sources": [
      "native/binding/addon.cc",
      "native/binding/args.cc",
      "native/binding/texts.cc",
      "native/binding/shingles.cc",
      "native/binding/runtime.cc",
      "native/binding/minhash.cc"
    ]
  }
}
