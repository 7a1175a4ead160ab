package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

// runToken prints an HS256 bearer token for a user (minted by
// github.com/golang-jwt/jwt/v5, like the server verifies it), for trying the API with
// real auth and for scripts. It does not check the user exists: the server
// does, on every request.
func runToken(_ context.Context, args []string, o cmdOptions) error {
	fs := o.flagSet("token")
	user := fs.String("user", "", "database id of the user the token signs in as")
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token is valid")
	secret := fs.String("jwt-secret", "", "HS256 secret the server verifies tokens with")
	issuer := fs.String("jwt-issuer", "", "\"iss\" claim of the token: the server's --jwt-issuer, if it has one")
	audience := fs.String("jwt-audience", "", "\"aud\" claim of the token: the server's --jwt-audience, if it has one")
	kid := fs.String("jwt-kid", "", "\"kid\" header of the token: the id of the HS256 (\"oct\") key in the server's --jwt-jwks-file whose secret is --jwt-secret")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *user == "" {
		return errors.New("token needs --user ID")
	}
	id, err := feedcore.ParseID(*user)
	if err != nil {
		return fmt.Errorf("--user: %w", err)
	}
	tok, err := auth.MintWith([]byte(*secret), id, *ttl, auth.MintOptions{Issuer: *issuer, Audience: *audience, KeyID: *kid})
	if err != nil {
		return fmt.Errorf("--jwt-secret: %w", err)
	}
	fmt.Fprintln(o.stdout, tok)
	return nil
}
