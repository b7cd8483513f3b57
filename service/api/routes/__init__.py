"""One thin router per feature; each query route hands its raw body to the door."""
