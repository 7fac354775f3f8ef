// [[gnu::progress]] misuse in C++ syntax; valid uses draw nothing, also alongside span.
[[gnu::progress]] int ok1 ();
[[gnu::progress ("ok"), gnu::span]] int ok2 ();
[[gnu::progress (1)]] int bad1 ();
[[gnu::progress ("")]] int bad2 ();
[[gnu::progress]] int variable;
[[gnu::progress ("a", "b")]] int bad3 ();
