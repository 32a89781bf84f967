#!/usr/bin/env perl
# random.pl: an Escoba Arena bot in Perl, written from docs/PROTOCOL.md alone.
#
# It plays a random legal move, but takes a capture when it has one (captures win points).
# Usage: perl bots/perl/random.pl [SEED]     (a seed makes its choices repeatable)
# Only core Perl modules (JSON::PP ships with Perl 5.14 and later).
use strict;
use warnings;
use JSON::PP;

$| = 1;                                   # flush stdout after every line
my $seed = @ARGV ? $ARGV[0] : time ^ $$;
srand($seed);
my $json = JSON::PP->new->utf8->canonical;
my ($seat, $matches) = (undef, 0);
my %seen;                                 # cards seen this hand, for a little card counting

sub send_line { print $json->encode($_[0]), "\n"; }

while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my $msg = eval { $json->decode($line) };
    if (!$msg) { print STDERR "random.pl: cannot parse: $line"; next; }
    my $type = $msg->{type} // '';
    if ($type eq 'hello' || $type eq 'new_match') {
        $seat = $msg->{seat};
        $matches++;
        %seen = ();
        print STDERR "random.pl: match $msg->{match}, seat $seat of $msg->{players}, seed $seed\n";
        send_line({ type => 'ready', name => 'random.pl', protocol => 1 });
    } elsif ($type eq 'event') {
        my $e = $msg->{event};
        if ($e->{type} eq 'deal' && $e->{round} == 0) { %seen = (); }
        $seen{$_} = 1 for @{ $e->{table} // [] }, @{ $e->{cards} // [] }, @{ $e->{take} // [] };
        $seen{ $e->{card} } = 1 if defined $e->{card};
    } elsif ($type eq 'request') {
        my @legal = @{ $msg->{legal} };
        my @captures = grep { /\+/ } @legal;
        my @pool = @captures ? @captures : @legal;
        my $move = $pool[ int(rand(@pool)) ];
        send_line({ type => 'move', id => $msg->{id}, move => $move });
    } elsif ($type eq 'match_over') {
        my $n = scalar keys %seen;
        print STDERR "random.pl: match over, winner side ", $msg->{winner} // 'none',
            ", scores @{ $msg->{scores} }, $n cards seen in the last hand\n";
    } elsif ($type eq 'goodbye') {
        last;
    }
    # 'timeout' and unknown types need no answer
}
exit 0;
