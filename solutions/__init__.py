"""The reference answers, one folder per lesson, mirroring exercises/."""
